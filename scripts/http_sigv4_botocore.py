#!/usr/bin/env python3
"""Prints the botocore-signed Authorization headers that src/engine/http.rs's unit tests
compare the http engine's S3 signing with (`pip install botocore`; run once, paste the
output into the test). Each case is a request as the engine makes it: a path-style
object URL, the payload's SHA-256, x-amz-storage-class, and optionally SSE-C headers and
a session token, at a fixed time."""
import base64, datetime, hashlib
from urllib.parse import quote
from unittest import mock

from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

WHEN = datetime.datetime(2026, 11, 27, 12, 34, 56)
SSE_KEY = b"0123456789abcdef0123456789abcdef"

CASES = [
    # name, method, path, body, region, sse, token
    ("put_plain", "PUT", "/bkt/obj_0_4096", b"hello, object store" * 10, "us-east-1", False, None),
    ("get_sse_token", "GET", "/bkt/a b+c=d_4096_4096", b"", "eu-central-1", True, "FQoGZXIvYXdzEXAMPLETOKEN"),
    ("delete_plain", "DELETE", "/bkt/obj_8192_4096", b"", "us-east-1", False, None),
]

for name, method, path, body, region, sse, token in CASES:
    creds = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", token)
    # The URL as the engine sends it: the path percent-encoded (botocore signs the path
    # of the URL it is given as it stands, expecting it encoded).
    req = AWSRequest(method=method, url="http://127.0.0.1:8333" + quote(path, safe="/~"), data=body)
    req.headers["x-amz-storage-class"] = "STANDARD"
    if sse:
        req.headers["x-amz-server-side-encryption-customer-algorithm"] = "AES256"
        req.headers["x-amz-server-side-encryption-customer-key"] = base64.b64encode(SSE_KEY).decode()
        req.headers["x-amz-server-side-encryption-customer-key-md5"] = base64.b64encode(
            hashlib.md5(SSE_KEY).digest()).decode()
    with mock.patch("botocore.auth.get_current_datetime", return_value=WHEN):
        S3SigV4Auth(creds, "s3", region).add_auth(req)
    print(name, req.headers["x-amz-date"], req.headers["x-amz-content-sha256"])
    print("   ", req.headers["Authorization"])
