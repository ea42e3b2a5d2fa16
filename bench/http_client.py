"""A logged-in user over HTTP for the load benchmark: cookies, CSRF, one keep-alive
connection that reconnects once when the server drops it."""

from __future__ import annotations

import http.client
import re
from urllib.parse import urlencode


class Browser:
    """One user's cookies over one keep-alive connection."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.cookies: dict[str, str] = {}
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)

    def request(self, method: str, path: str, body=None, headers=None):
        headers = {"Host": f"127.0.0.1:{self.port}", **(headers or {})}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        for attempt in (1, 2):
            try:
                self.connection.request(method, path, body=body, headers=headers)
                response = self.connection.getresponse()
                data = response.read()
                break
            except (http.client.HTTPException, OSError):
                self.connection.close()
                self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
                if attempt == 2:
                    raise
        for header in response.headers.get_all("Set-Cookie") or []:
            name, _, rest = header.partition("=")
            self.cookies[name] = rest.split(";")[0]
        return response.status, data

    def log_in(self, username: str, password: str) -> int:
        status, page = self.request("GET", "/accounts/login/")
        token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1).decode()
        status, _ = self.request(
            "POST",
            "/accounts/login/",
            urlencode({"csrfmiddlewaretoken": token, "username": username, "password": password}),
            {
                "Content-Type": "application/x-www-form-urlencoded",
                "Origin": f"http://127.0.0.1:{self.port}",
            },
        )
        return status

    def post_form(self, path: str, fields: dict) -> tuple[int, bytes]:
        return self.request(
            "POST",
            path,
            urlencode(fields),
            {
                "Content-Type": "application/x-www-form-urlencoded",
                "X-CSRFToken": self.cookies.get("csrftoken", ""),
                "HX-Request": "true",
                "Origin": f"http://127.0.0.1:{self.port}",
            },
        )
