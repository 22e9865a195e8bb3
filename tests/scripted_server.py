"""A scripted OpenAI-compatible HTTP server on 127.0.0.1, for testing the litellm path.

It is a test device, not a model: each request to ``/v1/chat/completions`` takes the next step
of its script, and each request is recorded for the test to inspect. A step is a dict:

- ``{"content": "..."}``: a normal reply;
- ``{"tool_calls": [{"name": ..., "arguments": {...} or "raw json text"}]}``: a tool call;
- ``{"status": 429, "body": {...}, "headers": {...}}``: an error answer (429, 401, 404, 500...);
- ``{"usage": {"prompt_tokens": n, "completion_tokens": m}}`` may accompany a reply.

``/v1/embeddings`` answers with deterministic vectors derived from each input's hash.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ScriptedOpenAIServer:
    """Start with ``with ScriptedOpenAIServer(steps) as server: ... server.base_url``."""

    def __init__(
        self,
        steps: list[dict[str, Any]] | None = None,
        *,
        models: tuple[str, ...] = ("scripted-model",),
    ) -> None:
        self.steps = list(steps or [])
        self.models = models
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> ScriptedOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def chat_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["_path"].endswith("/chat/completions")]

    def _next_step(self) -> dict[str, Any]:
        with self._lock:
            if not self.steps:
                return {
                    "status": 500,
                    "body": {"error": {"message": "script exhausted", "type": "server_error"}},
                }
            return self.steps.pop(0)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(
                self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
            ) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                payload = json.loads(self.rfile.read(length) or b"{}")
                payload["_path"] = self.path
                with outer._lock:
                    outer.requests.append(payload)
                    outer.headers.append({k.lower(): v for k, v in self.headers.items()})
                if self.path.endswith("/embeddings"):
                    self._embeddings(payload)
                elif self.path.endswith("/chat/completions"):
                    self._chat(payload)
                else:
                    self._send(
                        404,
                        {
                            "error": {
                                "message": f"no route {self.path}",
                                "type": "invalid_request_error",
                            }
                        },
                    )

            def _embeddings(self, payload: dict[str, Any]) -> None:
                inputs = payload.get("input")
                inputs = [inputs] if isinstance(inputs, str) else list(inputs or [])
                data = []
                for i, text in enumerate(inputs):
                    digest = hashlib.sha256(str(text).encode()).digest()
                    data.append(
                        {
                            "object": "embedding",
                            "index": i,
                            "embedding": [b / 255.0 - 0.5 for b in digest[:16]],
                        }
                    )
                self._send(
                    200,
                    {
                        "object": "list",
                        "data": data,
                        "model": payload.get("model"),
                        "usage": {"prompt_tokens": len(inputs), "total_tokens": len(inputs)},
                    },
                )

            def _chat(self, payload: dict[str, Any]) -> None:
                model = payload.get("model")
                if model not in outer.models:
                    self._send(
                        404,
                        {
                            "error": {
                                "message": f"The model `{model}` does not exist.",
                                "type": "invalid_request_error",
                                "code": "model_not_found",
                            }
                        },
                    )
                    return
                step = outer._next_step()
                if "status" in step:
                    self._send(
                        int(step["status"]),
                        step.get("body") or {"error": {"message": "scripted error"}},
                        step.get("headers"),
                    )
                    return
                message: dict[str, Any] = {"role": "assistant", "content": step.get("content")}
                finish = "stop"
                if step.get("tool_calls"):
                    finish = "tool_calls"
                    message["tool_calls"] = [
                        {
                            "id": f"call_{i}",
                            "type": "function",
                            "function": {
                                "name": c["name"],
                                "arguments": c["arguments"]
                                if isinstance(c["arguments"], str)
                                else json.dumps(c["arguments"]),
                            },
                        }
                        for i, c in enumerate(step["tool_calls"])
                    ]
                usage = step.get("usage") or {"prompt_tokens": 11, "completion_tokens": 7}
                usage = {
                    **usage,
                    "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"],
                }
                self._send(
                    200,
                    {
                        "id": f"chatcmpl-{len(outer.requests)}",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": model,
                        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                        "usage": usage,
                    },
                )

        return Handler
