#!/usr/bin/env python3
"""Serves the viewer (build/web/) on loopback with the headers that make the
page cross-origin isolated, so the browser's clock is fine enough (5 us
rather than 100 us) for the build and repair times the page shows.
usage: serve.py DIR [PORT]   (PORT 0 picks a free one; prints the address)"""
import functools
import http.server
import sys


class Handler(http.server.SimpleHTTPRequestHandler):
    def end_headers(self):
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def guess_type(self, path):
        return "application/wasm" if str(path).endswith(".wasm") else super().guess_type(path)

    def log_message(self, *args):
        pass


def server(directory, port=0):
    handler = functools.partial(Handler, directory=directory)
    return http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)


if __name__ == "__main__":
    srv = server(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 8321)
    print(f"web: http://127.0.0.1:{srv.server_address[1]}/ (Ctrl-C stops)", flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
