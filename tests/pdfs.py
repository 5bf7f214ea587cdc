"""Small PDFs written by hand for the tests: pages of Helvetica text, and one that is
encrypted (an /Encrypt dictionary whose password check fails, so PDFium refuses it)."""

from __future__ import annotations

from collections.abc import Sequence


def pdf(pages: Sequence[Sequence[str]], *, encrypt: bool = False) -> bytes:
    """A PDF of ``pages``, each a list of lines set in 12-point Helvetica."""
    n = len(pages)
    font = 3 + 2 * n
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids ["
        + b" ".join(b"%d 0 R" % (3 + 2 * i) for i in range(n))
        + b"] /Count %d >>" % n,
    ]
    for i, lines in enumerate(pages):
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
            b"/Resources << /Font << /F1 %d 0 R >> >> >>" % (4 + 2 * i, font)
        )
        body = (
            b"BT /F1 12 Tf 14 TL 72 720 Td "
            + b" ".join(b"(" + _escape(line) + b") Tj T*" for line in lines)
            + b" ET"
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(body) + body + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    trailer_extra = b""
    if encrypt:
        objects.append(
            b"<< /Filter /Standard /V 2 /R 3 /Length 128 /P -4 "
            b"/O <" + b"11" * 32 + b"> /U <" + b"22" * 32 + b"> >>"
        )
        trailer_extra = b" /Encrypt %d 0 R /ID [<%s> <%s>]" % (len(objects), b"ab" * 16, b"ab" * 16)
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, obj in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + obj + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % at for at in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        trailer_extra,
        xref,
    )
    return bytes(out)


def _escape(line: str) -> bytes:
    return (
        line.encode("latin-1").replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")
    )
