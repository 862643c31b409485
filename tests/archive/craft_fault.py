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
"""
import struct
import sys

import h5py

src, dst, group, attr = sys.argv[1:5]
with h5py.File(src, "r") as f:
    header = h5py.h5o.get_info(f[group].id).addr
data = bytearray(open(src, "rb").read())
name = attr.encode() + b"\0"
at = data.find(name, header)
while at >= 0:
    body = at - 8  # version, reserved, name size, datatype size, dataspace size
    kind, size, flags = struct.unpack_from("<HHB", data, body - 8)
    if kind == 0x000C and data[body] == 1 and struct.unpack_from("<H", data, body + 2)[0] == len(name):
        break
    at = data.find(name, at + 1)
if at < 0:
    sys.exit("craft_fault.py: no version-1 attribute message %r after %s's header at %d" % (attr, group, header))
data[body - 4] = flags | 0x02
struct.pack_into("<Q", data, body + 16, header)
open(dst, "wb").write(data)
