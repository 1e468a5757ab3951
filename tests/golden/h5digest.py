"""h5digest.py FILE.h5 [--list] - an MD5 digest of an HDF5 file's content: every
group's and dataset's name, attributes, type, shape and value bytes, in
name order. The golden test digests traces and sweep files this way, not
by their bytes: the bytes also depend on the HDF5 library's and zlib's
internals (chunk compression, free-space layout), which differ between
machines of the same Debian release while every stored value is the same.
The scenario text a trace keeps (/scenario: libxml2's serialisation of the
document after XInclude and --set) is digested with its runs of white space
collapsed: where the serialiser breaks lines and keeps blank lines is the
library's, not dcsim's. (On 2026-12-03 every trace digest changed on a fresh
machine, libxml2 2.9.14+dfsg-1.3~deb12u6, for code whose JSON and text
digests were all unchanged; collapsed, the serialised text and the source
file digest alike.) --list prints one digest per object (name, attributes, type,
shape, values) instead: compare two machines' lists to find the object
whose content differs. Run with Debian's /usr/bin/python3 (h5py)."""
import hashlib
import sys

import h5py
import numpy as np


def value_bytes(value):
    """Bytes of a value read back: numbers as stored, text as UTF-8 (never
    the pointers an object array holds)."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    value = np.asarray(value)
    if value.dtype.kind == "O":
        return repr(value.tolist()).encode()
    if value.dtype.names:
        # field by field: a compound's padding bytes are whatever memory
        # numpy allocated for the read (HDF5 fills only the fields), so they
        # differ between machines and runs
        return b"".join(name.encode() + value_bytes(value[name]) for name in value.dtype.names)
    return str(value.dtype).encode() + np.ascontiguousarray(value).tobytes()


def dtype_text(dtype):
    """A type as names and field types, without offsets or item size."""
    if dtype.names:
        return "{" + ",".join(n + ":" + dtype_text(dtype.fields[n][0]) for n in dtype.names) + "}"
    return str(dtype)


def dataset_value(obj):
    """A dataset's value as digested: /scenario with white space collapsed."""
    value = obj[()]
    if obj.name == "/scenario" and isinstance(value, (bytes, str)):
        text = value.decode() if isinstance(value, bytes) else value
        return " ".join(text.replace("> <", "><").split()).replace("> <", "><")
    return value


def feed(h, obj):
    h.update(obj.name.encode())
    for key in sorted(obj.attrs):
        h.update(key.encode())
        h.update(value_bytes(obj.attrs[key]))
    if isinstance(obj, h5py.Dataset):
        h.update(dtype_text(obj.dtype).encode() + str(obj.shape).encode())
        h.update(value_bytes(dataset_value(obj)))
    else:
        for key in sorted(obj):
            feed(h, obj[key])


def list_objects(f):
    def one(name, obj):
        h = hashlib.md5()
        for key in sorted(obj.attrs):
            h.update(key.encode())
            h.update(value_bytes(obj.attrs[key]))
        if isinstance(obj, h5py.Dataset):
            h.update(dtype_text(obj.dtype).encode() + str(obj.shape).encode())
            h.update(value_bytes(dataset_value(obj)))
        print(h.hexdigest(), name)
    one("/", f)
    f.visititems(one)


def main():
    with h5py.File(sys.argv[1], "r") as f:
        if sys.argv[2:] == ["--list"]:
            list_objects(f)
            return
        h = hashlib.md5()
        feed(h, f)
    print(h.hexdigest())


if __name__ == "__main__":
    main()
