"""A ``user_agent`` for a desktop or command-line client: the system browser and a
one-shot HTTP listener on the loopback redirect URI.

Spec: basic/authorization#communication-security (redirect URIs are localhost or
https), RFC 8252 §7.3 (loopback redirection for native apps). The listener accepts
one request to the redirect path, answers a short page and returns the full URL it
was sent to (``OAuthClientProvider`` checks ``state``, ``iss`` and the code).
"""
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import urlsplit

from mcp_ref.auth.discovery import LOOPBACK_HOSTS
from mcp_ref.auth.exceptions import AuthorizationDenied

__all__ = ["LoopbackUserAgent"]

PAGE = b"<!doctype html><title>Authorized</title><p>Authorization finished; you can close this window.</p>"


class LoopbackUserAgent:
    """``LoopbackUserAgent(redirect_uri)`` is a ``user_agent`` callback. ``open_browser(url)``
    shows the authorization URL (default: ``webbrowser.open``); ``timeout`` seconds for
    the user to finish."""

    def __init__(self, redirect_uri: str, *, open_browser=None, timeout: float = 300.0):
        parts = urlsplit(redirect_uri)
        if parts.scheme != "http" or parts.hostname not in LOOPBACK_HOSTS or not parts.port:
            raise ValueError(f"a loopback redirect_uri is http://localhost:PORT/path, not {redirect_uri!r}")
        self.redirect_uri, self.timeout = redirect_uri, timeout
        import webbrowser                        # only where a browser may be wanted
        self.open_browser = open_browser or webbrowser.open

    def __call__(self, authorization_url: str) -> str:
        received = []
        done = threading.Event()
        parts = urlsplit(self.redirect_uri)
        path, origin = parts.path or "/", "http://" + parts.netloc

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                if urlsplit(self.path).path != path or done.is_set():
                    self.send_error(404)
                    return
                received.append(origin + self.path)
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(PAGE)))
                self.end_headers()
                self.wfile.write(PAGE)
                done.set()

        host, port = str(parts.hostname), int(parts.port or 0)      # both checked in __init__
        server = HTTPServer(("127.0.0.1" if host == "localhost" else host, port), Handler)
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, name="mcp-auth-loopback",
                         daemon=True).start()
        try:
            self.open_browser(authorization_url)
            if not done.wait(self.timeout):
                raise AuthorizationDenied(f"no authorization response reached {self.redirect_uri} within "
                                          f"{self.timeout:g} s")
            return received[0]
        finally:
            server.shutdown()                    # returns once serve_forever has
            server.server_close()
