"""The pages beyond labelling speak Chinese too when the browser asks for it."""

from __future__ import annotations

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db

ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-CN,zh;q=0.9"}


def test_metrics_agreement_import_tokens_and_gold_pages_in_chinese(login, personas, corpus):
    client = login(personas["owner"])
    pages = {
        reverse("metrics:dashboard", args=["acme"]): ("实时标注", "live labels"),
        reverse("gold:agreement", args=["acme"]): ("按分歧排序的查询", "Queries by disagreement"),
        reverse("annotator:import_upload", args=["acme"]): ("上传并导入", "Upload and import"),
        reverse("api:tokens"): ("创建令牌", "Create a token"),
        reverse("metrics:compare", args=["acme"]): (
            "请选择一个基线",
            "Choose a baseline and at least one other run",
        ),
    }
    for url, (chinese, english) in pages.items():
        body = client.get(url, **ZH).content.decode()
        assert chinese in body, url
        assert english not in body, url
