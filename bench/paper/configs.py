"""The configurations of the Piper paper's experiments (Tarnawski et al., NeurIPS 2021), as the
public reference code's experiment drivers define them (algo.cpp: plots() for Fig. 1,
parallelizabilityExperiment() for Fig. 2, scalability() for Fig. 3, runGNMT() and runResnet() for
the appendix tables).  Sizes are in bytes, bandwidth in bytes per second, exactly as the
reference computes them, so that piper and the reference parse the same doubles."""

GIB = float(1 << 30)
BANDWIDTH = 25.0 * GIB  # 25 GiB/s everywhere

BERT32 = "bert32a100.json"
GNMT = "gnmt.json"
RESNET = "resnet.json"

FIG1_MEMORY_GB = [1, 2, 8, 80]
FIG1_DEVICES = [8, 32, 64, 128, 512, 1024, 2048]
FIG1_MICROBATCHES = 1920
# (label, piper plan flags, piper-ref flag)
FIG1_VARIANTS = [
    ("Piper", [], "none"),
    ("no DP", ["--no-dp"], "nodp"),
    ("no TP", ["--no-tp"], "notp"),
    ("no AR", ["--no-recompute"], "noar"),
    ("equi-no TP", ["--planner", "equi", "--no-tp"], "equi-notp"),
    ("equi", ["--planner", "equi"], "equi"),
]

FIG2_MEMORY_GB = 8
FIG2_DEVICES = 2048
FIG2_MICROBATCHES = [960, 512]

FIG3_LAYERS = [32, 48, 64, 96]
FIG3_MICROBATCHES = [480, 512, 1920, 2048]
FIG3_DEVICES = [8, 16, 32, 64, 128, 256, 512, 1024, 1536, 2048]

# (devices, memory in GiB) pairs of the appendix tables, sorted as the reference sorts them.
GNMT_PAIRS = sorted([(2, 2.5), (2, 3.5), (4, 1.2), (4, 2.5), (8, 0.6), (8, 1.2), (8, 2.4), (16, 0.3),
                     (16, 0.6), (16, 1.2), (32, 0.3), (64, 0.3), (32, 0.8)])
RESNET_PAIRS = sorted([(8, 4.0), (8, 8.0), (16, 1.5), (16, 2.0), (16, 4.0), (16, 8.0), (32, 1.5),
                       (32, 2.0), (32, 4.0), (32, 8.0), (64, 1.0), (64, 1.5), (64, 2.0), (64, 4.0),
                       (128, 1.0), (128, 1.5), (128, 2.0), (128, 4.0), (8, 16.0), (16, 16.0),
                       (32, 16.0), (64, 8.0), (64, 16.0), (128, 8.0), (128, 16.0)])
GNMT_MICROBATCHES = 256  # the file's mbsInBatch, which the reference keeps
RESNET_MICROBATCHES = 7680


def equi_configs():
    """Every configuration on which the equi baseline is compared with the reference:
    (name, input file, devices, memory bytes, microbatches, ref flag)."""
    out = []
    for gb in FIG1_MEMORY_GB:
        for k in FIG1_DEVICES:
            for flag in ("equi-notp", "equi"):
                out.append((f"bert32_m{gb}_k{k}_{flag}", BERT32, k, GIB * gb, FIG1_MICROBATCHES, flag))
    # the appendix runs runPipeDream2BWPlannerNonTransformer(ins, false): without TP
    for k, gb in GNMT_PAIRS:
        out.append((f"gnmt_k{k}_m{gb}", GNMT, k, gb * GIB, GNMT_MICROBATCHES, "equi-notp"))
    for k, gb in RESNET_PAIRS:
        out.append((f"resnet_k{k}_m{gb}", RESNET, k, gb * GIB, RESNET_MICROBATCHES, "equi-notp"))
    return out
