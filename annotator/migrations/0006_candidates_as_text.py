from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("annotator", "0005_post_edit_suggestions")]

    operations = [
        migrations.AddField(
            model_name="project",
            name="candidate_overlap",
            field=models.FloatField(
                default=0.5,
                help_text=(
                    "Candidates sharing more than this share of the shorter one's text (or "
                    "lying inside another) are shown as one card."
                ),
            ),
        ),
        migrations.AddField(
            model_name="project",
            name="mapping",
            field=models.CharField(
                default="any_overlap",
                help_text=(
                    "How a label reaches the candidates it covers: any_overlap, contains, "
                    "evidence_overlap>=θ or chunk_overlap>=θ."
                ),
                max_length=40,
            ),
        ),
        migrations.AddField(
            model_name="assignment",
            name="unjudged_at_done",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.AddConstraint(
            model_name="project",
            constraint=models.CheckConstraint(
                condition=models.Q(("candidate_overlap__gt", 0), ("candidate_overlap__lte", 1)),
                name="project_candidate_overlap_share",
            ),
        ),
    ]
