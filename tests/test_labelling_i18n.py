"""The labelling screens in Simplified Chinese: browser preference, switch, messages."""

from __future__ import annotations

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db

ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-CN,zh;q=0.9,en;q=0.5"}


def test_browser_preference_gives_the_chinese_ui(login, personas, corpus):
    client = login(personas["annotator"])
    url = reverse("annotator:label_query", args=["acme", corpus["query"].pk])
    body = client.get(url, **ZH).content.decode()
    assert '<html lang="zh-hans">' in body
    for text in ("候选", "评级并前进", "在文档中搜索检索结果遗漏的内容", "完全回答", "我的队列"):
        assert text in body, text
    assert "Candidates" not in body and "grade and move on" not in body
    english = client.get(url, HTTP_ACCEPT_LANGUAGE="en-US,en;q=0.9").content.decode()
    assert "Candidates" in english and "候选" not in english


def test_every_labelling_page_speaks_chinese(login, personas, corpus):
    client = login(personas["owner"])
    q = corpus["query"].pk
    pages = {
        reverse("annotator:queue", args=["acme"]): "你的队列",
        reverse("annotator:assign", args=["acme"]): "分配查询",
        reverse("annotator:label_query_document", args=["acme", q])
        + f"?document={corpus['document'].pk}": "为整篇文档评级",
        reverse("annotator:label_query_document", args=["acme", q]): "查询相关文档",
        reverse("annotator:label_query_search", args=["acme", q]) + "?q=机翼": "找到 1 个文本块",
    }
    for url, text in pages.items():
        assert text in client.get(url, **ZH).content.decode(), url


def test_the_language_switch_wins_over_the_browser(login, personas, corpus):
    client = login(personas["annotator"])
    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    url = reverse("annotator:queue", args=["acme"])
    assert "你的队列" in client.get(url, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    client.post(reverse("set_language"), {"language": "en", "next": "/"})
    assert "Your queue" in client.get(url, **ZH).content.decode()


def test_save_messages_and_errors_are_translated(login, personas, corpus):
    client = login(personas["annotator"])
    url = reverse("annotator:label_query_judge", args=["acme", corpus["query"].pk])
    saved = client.post(
        url, {"chunk": corpus["chunk"].pk, "grade": 3}, HTTP_HX_REQUEST="true", **ZH
    )
    assert "已保存：3 · 完全回答" in saved.content.decode()
    bad = client.post(url, {"chunk": corpus["chunk"].pk, "grade": 9}, **ZH)
    assert bad.status_code == 400
    assert "请选择 0 到 3 的等级" in bad.content.decode()
