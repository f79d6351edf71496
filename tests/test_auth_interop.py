"""Authorization interop with the official Python SDK (``mcp`` >= 2), both ways.

* The SDK's OAuth client (``mcp.client.auth.OAuthClientProvider`` on its Streamable
  HTTP client), in a subprocess, against an ``mcp_ref`` server protected with
  ``auth=``: 401, discovery through our protected resource metadata, registration,
  authorization code with PKCE at tests/oauth_server.py, then calls.
* ``mcp_ref.Client.http(url, auth=OAuthClientProvider(...))`` against an SDK server
  (``MCPServer`` with ``AuthSettings`` and a token verifier that introspects at the
  test authorization server), in a subprocess on a free port.

Spec: basic/authorization.
"""
import json
import subprocess
import sys
from urllib.parse import parse_qs, urlsplit

import pytest

from helpers import require_official_sdk

require_official_sdk()
pytest.importorskip("uvicorn", reason="the SDK's HTTP server runs on uvicorn")
pytest.importorskip("requests", reason="the mcp_ref HTTP client needs requests")
pytest.importorskip("requests", reason="the mcp_ref HTTP client needs requests")

from oauth_server import AuthServer  # noqa: E402

from mcp_ref import Client, Context, Server  # noqa: E402
from mcp_ref.auth import OAuthClientProvider  # noqa: E402
from mcp_ref.transports.http.server.app import start_http  # noqa: E402

TIMEOUT = 90

SDK_OAUTH_CLIENT = '''
import anyio, json, sys, warnings
warnings.simplefilter("ignore")
from urllib.parse import parse_qs, urlsplit
import httpx2
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata

class Memory:
    tokens = client = None
    async def get_tokens(self): return self.tokens
    async def set_tokens(self, tokens): self.tokens = tokens
    async def get_client_info(self): return self.client
    async def set_client_info(self, client): self.client = client

async def main(url):
    seen = {}
    async def redirect_handler(authorization_url):
        seen["authorization_url"] = authorization_url
        async with httpx2.AsyncClient() as http:
            response = await http.get(authorization_url, follow_redirects=False)
        seen["location"] = response.headers["location"]
    async def callback_handler():
        query = {k: v[0] for k, v in parse_qs(urlsplit(seen["location"]).query).items()}
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))
    metadata = OAuthClientMetadata(client_name="sdk", redirect_uris=["http://localhost:3030/cb"],
                                   grant_types=["authorization_code", "refresh_token"])
    provider = OAuthClientProvider(url, metadata, Memory(), redirect_handler, callback_handler)
    async with httpx2.AsyncClient(auth=provider, timeout=30) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            result = await client.call_tool("whoami", {})
            report = {"whoami": [c.text for c in result.content], "authorization_url": seen["authorization_url"]}
    print(json.dumps(report), flush=True)

anyio.run(main, sys.argv[1])
'''

SDK_PROTECTED_SERVER = '''
import socket, sys, warnings
warnings.simplefilter("ignore")
import httpx2, uvicorn
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
issuer = sys.argv[1]
sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.bind(("127.0.0.1", 0))
sock.listen(128)
url = "http://127.0.0.1:%d/mcp" % sock.getsockname()[1]

class Introspecting:
    async def verify_token(self, token):
        async with httpx2.AsyncClient() as http:
            answer = (await http.post(issuer + "/introspect", data={"token": token})).json()
        if not answer.get("active"):
            return None
        return AccessToken(token=token, client_id=answer.get("client_id") or "", scopes=answer["scope"].split(),
                           expires_at=answer.get("exp"), resource=answer.get("aud"), subject=answer.get("sub"))

mcp = MCPServer("sdk-protected", token_verifier=Introspecting(),
                auth=AuthSettings(issuer_url=issuer, resource_server_url=url, required_scopes=["mcp"],
                                  validate_token_resource=True))

@mcp.tool()
def hello() -> str:
    return "hello from the SDK"

server = uvicorn.Server(uvicorn.Config(mcp.streamable_http_app(), log_level="warning", lifespan="on"))
print("READY " + url, flush=True)
server.run(sockets=[sock])
'''


def test_sdk_oauth_client_against_our_protected_server():
    auth = AuthServer(scopes_supported=["mcp"])
    server = Server("protected", version="1.0")

    @server.tool
    def whoami(ctx: Context) -> str:
        return f"{ctx.subject} {' '.join(ctx.scopes)}"
    handle = start_http(server, ("127.0.0.1", 0), auth=auth.verify, required_scopes=["mcp"],
                        resource_metadata={"authorization_servers": [auth.issuer], "scopes_supported": ["mcp"]})
    try:
        done = subprocess.run([sys.executable, "-c", SDK_OAUTH_CLIENT, handle.url], capture_output=True, text=True,
                              timeout=TIMEOUT)
        assert done.returncode == 0, done.stderr[-3000:]
        report = json.loads(done.stdout.strip().splitlines()[-1])
        assert report["whoami"] == ["alice mcp"]
        query = parse_qs(urlsplit(report["authorization_url"]).query)
        assert query["resource"] == [handle.url] and query["code_challenge_method"] == ["S256"]
        assert len(auth.requests_to("/register")) == 1
    finally:
        handle.shutdown()
        auth.close()


def test_our_client_against_an_sdk_protected_server():
    auth = AuthServer(scopes_supported=["mcp"])
    process = subprocess.Popen([sys.executable, "-c", SDK_PROTECTED_SERVER, auth.issuer], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        assert line.startswith("READY "), process.stderr.read()[-3000:] if process.poll() is not None else line
        url = line.split()[1]
        provider = OAuthClientProvider(redirect_uri="http://localhost:3030/cb", user_agent=auth.user_agent)
        with Client.http(url, auth=provider, timeout=30) as client:
            assert client.call_tool("hello").content[0].text == "hello from the SDK"
        [authorize] = auth.requests_to("/authorize")
        assert authorize["resource"] == url and authorize["scope"] == "mcp"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        process.stdout.close()
        process.stderr.close()
        auth.close()
