import pytest
from django.core.management import CommandError, call_command

from annotator.models import Chunk, Document, Query
from metrics.models import Run, RunLevel

pytestmark = pytest.mark.django_db


@pytest.fixture
def small_corpus(corpus, personas):
    project = personas["project"]
    extra = Document.objects.create(
        project=project, doc_id="d2", title="Drag", text="醉酒驾驶 drag"
    )
    Chunk.objects.create(
        chunking=corpus["chunking"], chunk_id="d2#0", document=extra, start=0, end=len(extra.text)
    )
    Query.objects.create(project=project, qid="q2", text="醉酒驾驶")
    return project


def test_bm25_run_over_a_chunking(small_corpus, corpus):
    call_command("bm25_run", "acme", "--chunking", "c256", "--k", "5")
    run = Run.objects.get(project=small_corpus, name="bm25 · c256")
    assert run.level == RunLevel.CHUNK and run.chunking == corpus["chunking"]
    query, item, score = run.get_results()
    q2 = Query.objects.get(qid="q2").pk
    top = item[query == q2][score[query == q2].argmax()]
    assert Chunk.objects.get(pk=top).chunk_id == "d2#0"
    assert run.parameters["k"] == 5 and run.parameters["model"] == "bm25"


def test_bm25_run_over_documents_and_replace(small_corpus):
    call_command("bm25_run", "acme", "--documents")
    with pytest.raises(CommandError, match="exists; use --replace"):
        call_command("bm25_run", "acme", "--documents")
    call_command("bm25_run", "acme", "--documents", "--replace", "--k", "1")
    run = Run.objects.get(project=small_corpus, name="bm25 · documents")
    assert run.level == RunLevel.DOCUMENT and run.n_results <= 2


def test_bm25_run_errors_name_the_problem(small_corpus):
    with pytest.raises(CommandError, match="no chunking 'nope' in acme"):
        call_command("bm25_run", "acme", "--chunking", "nope")
    with pytest.raises(CommandError, match="no project with slug 'zzz'"):
        call_command("bm25_run", "zzz", "--documents")
    assert Run.objects.count() == 0
