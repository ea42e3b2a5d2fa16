"""Django admin for staff: browse everything, edit projects and members; labels read-only."""

from django.contrib import admin

from .models import (
    Assignment,
    Chunk,
    Chunking,
    Document,
    ImportJob,
    Judgment,
    JudgmentHistory,
    Membership,
    Project,
    Query,
)


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    raw_id_fields = ["user"]


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "relevance_threshold", "pool_depth"]
    search_fields = ["slug", "name"]
    inlines = [MembershipInline]


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ["doc_id", "title", "project"]
    list_filter = ["project"]
    search_fields = ["doc_id", "title"]


@admin.register(Query)
class QueryAdmin(admin.ModelAdmin):
    list_display = ["qid", "text", "project"]
    list_filter = ["project"]
    search_fields = ["qid", "text"]


@admin.register(Chunking)
class ChunkingAdmin(admin.ModelAdmin):
    list_display = ["name", "project"]
    list_filter = ["project"]


@admin.register(Chunk)
class ChunkAdmin(admin.ModelAdmin):
    list_display = ["chunk_id", "chunking", "document", "start", "end"]
    list_filter = ["chunking"]
    raw_id_fields = ["document"]


class ReadOnlyAdmin(admin.ModelAdmin):
    """Labels change only through the app, so that every change is in the history."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Judgment)
class JudgmentAdmin(ReadOnlyAdmin):
    list_display = ["query", "annotator", "granularity", "document", "start", "end", "grade"]
    list_filter = ["granularity", "grade"]


@admin.register(JudgmentHistory)
class JudgmentHistoryAdmin(ReadOnlyAdmin):
    list_display = ["at", "event", "query", "annotator", "changed_by", "old_grade", "new_grade"]
    list_filter = ["event"]


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["query", "annotator", "status", "time_spent_seconds"]
    list_filter = ["status"]
    raw_id_fields = ["query", "annotator", "assigned_by"]


@admin.register(ImportJob)
class ImportJobAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "project", "kind", "filename", "status", "created_count"]
    list_filter = ["status", "kind"]
