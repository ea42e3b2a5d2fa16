"""The file store: where ASSAY_STORAGE_URL sends files, and the one module that reads and
writes them (a folder by default, S3-compatible object storage when configured)."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from annotator import file_store
from config.settings import file_storage


def test_no_url_keeps_files_in_the_data_folder():
    backend = file_storage("")
    assert backend["BACKEND"].endswith("FileSystemStorage")
    assert backend["OPTIONS"]["allow_overwrite"] is True


def test_an_s3_url_names_bucket_prefix_endpoint_and_region():
    backend = file_storage(
        "s3://assay-files/prod/eu?endpoint_url=http://127.0.0.1:9000&region=eu-central-1"
        "&addressing_style=path"
    )
    assert backend["BACKEND"] == "storages.backends.s3.S3Storage"
    options = backend["OPTIONS"]
    assert (options["bucket_name"], options["location"]) == ("assay-files", "prod/eu")
    assert options["endpoint_url"] == "http://127.0.0.1:9000"
    assert (options["region_name"], options["addressing_style"]) == ("eu-central-1", "path")
    assert options["file_overwrite"] is True and options["querystring_auth"] is False


@pytest.mark.parametrize(
    "url",
    [
        "http://bucket/prefix",
        "s3:///prefix",
        "s3://key:secret@bucket/prefix",
        "s3://bucket?endpoint=http://x",
    ],
)
def test_bad_storage_urls_are_refused_at_start(url):
    with pytest.raises(ImproperlyConfigured):
        file_storage(url)


def test_put_replaces_and_local_copy_is_the_file(tmp_path):
    source = tmp_path / "a.bin"
    source.write_bytes(b"one")
    assert file_store.put("originals/1/abc.pdf", source) == "originals/1/abc.pdf"
    file_store.put_bytes("originals/1/abc.pdf", b"two")  # replaced, not renamed
    assert file_store.read_bytes("originals/1/abc.pdf") == b"two"
    assert file_store.local_copy("originals/1/abc.pdf").read_bytes() == b"two"
    file_store.delete("originals/1/abc.pdf")
    assert not file_store.exists("originals/1/abc.pdf")
    assert file_store.read_bytes("originals/1/abc.pdf") is None


def test_object_storage_files_are_fetched_once_to_the_cache(settings, tmp_path, monkeypatch):
    import boto3
    from moto import mock_aws

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="files")
        settings.STORAGES = {
            **settings.STORAGES,
            "default": file_storage("s3://files/assay?region=us-east-1"),
        }
        settings.ASSAY_FILE_CACHE_DIR = tmp_path / "cache"
        file_store.put_bytes("uploads/imports/x.jsonl", b'{"doc_id": "1"}\n')
        copy = file_store.local_copy("uploads/imports/x.jsonl")
        assert copy == tmp_path / "cache" / "uploads/imports/x.jsonl"
        assert copy.read_bytes() == b'{"doc_id": "1"}\n'
        keys = [o["Key"] for o in boto3.client("s3").list_objects_v2(Bucket="files")["Contents"]]
        assert keys == ["assay/uploads/imports/x.jsonl"]
        file_store.forget_local_copy("uploads/imports/x.jsonl")
        assert not copy.exists()
