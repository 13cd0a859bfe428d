# tests/bandwidth.sh runs this.
SPECS = {  # reported name -> (entry, memory type, bytes/s)
    "NVIDIA H100 80GB HBM3": ("H100-80GB", "HBM3", 3350 * 10**9),
    "NVIDIA A100-SXM4-80GB": ("A100-80GB", "HBM2e", 2039 * 10**9),
    "Tesla T4": ("T4", "GDDR6", 320 * 10**9),
    "NVIDIA GeForce RTX 3090": ("RTX-3090", "GDDR6X", 936 * 10**9),
    "Tesla V100-SXM2-32GB": ("V100-32GB", "HBM2", 900 * 10**9),
    "Tesla V100-DGXS-32GB": ("V100-32GB", "HBM2", 900 * 10**9),
}
