#!/usr/bin/python3
"""Makes a file on which HDF5 1.10.8 itself faults, from a valid HDF5 file.

usage: craft_fault.py IN.h5 OUT.h5 GROUP ATTRIBUTE

How tests/archive/hdf5-fault.h5 (from an archive: /problem devices) and
hdf5-fault.ckpt (from a checkpoint: / identity) were made.  The attribute's
message (version 1, in GROUP's object header) is flagged shared (bit 1 of
the message's flags) and the object-header address that HDF5 reads from a
version-1 shared message, 16 bytes into the message, is set to GROUP's own
header.  Looking up any attribute of GROUP then makes HDF5 follow the
reference into the same message again, recursively, until its stack
overflows: a SIGSEGV that does not depend on what the heap holds.
attribute_message() also serves craft.py.
"""
import struct
import sys

import h5py


def attribute_message(path, data, group, attr):
    """(header, body): the address of GROUP's object header and the offset
    in data of the body of ATTRIBUTE's version-1 message there (version,
    reserved, name size, datatype size, dataspace size, then the name
    padded to 8 bytes, the datatype, the dataspace and the value); the
    message's own 8-byte header (type, size, flags) precedes the body."""
    with h5py.File(path, "r") as f:
        header = h5py.h5o.get_info(f[group].id).addr
    name = attr.encode() + b"\0"
    at = data.find(name, header)
    while at >= 0:
        body = at - 8
        kind = struct.unpack_from("<H", data, body - 8)[0]
        if kind == 0x000C and data[body] == 1 and struct.unpack_from("<H", data, body + 2)[0] == len(name):
            return header, body
        at = data.find(name, at + 1)
    sys.exit("craft_fault.py: no version-1 attribute message %r after %s's header at %d" % (attr, group, header))


if __name__ == "__main__":
    src, dst, group, attr = sys.argv[1:5]
    data = bytearray(open(src, "rb").read())
    header, body = attribute_message(src, data, group, attr)
    data[body - 4] |= 0x02
    struct.pack_into("<Q", data, body + 16, header)
    open(dst, "wb").write(data)
