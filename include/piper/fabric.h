/*
 * fabric.h - whether this host shows a device of a high-speed fabric
 * (InfiniBand, RoCE, EFA, Omni-Path, Slingshot, Aries), from the names the
 * kernel gives such devices.  Used before MPI starts, to leave out the MPI
 * transports whose only use is such a fabric (see src/dist/dist.c).
 * Not collective; no global state; reads directories only.
 */
#ifndef PIPER_FABRIC_H
#define PIPER_FABRIC_H

/* Returns 1 if the directory rdma_class (the host's is
 * "/sys/class/infiniband": the RDMA devices of InfiniBand, RoCE, iWARP,
 * EFA and usNIC adapters) has an entry other than "." and "..", or the
 * directory dev (the host's is "/dev") has an entry whose name begins with
 * "hfi1" (Omni-Path), "ipath" (TrueScale), "cxi" (Slingshot) or "kgni"
 * (Aries); else 0.  A directory that cannot be read counts as empty.
 * Never fails; allocates nothing that outlives the call. */
int pp_fabric_visible(const char *rdma_class, const char *dev);

#endif /* PIPER_FABRIC_H */
