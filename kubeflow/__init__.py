from trainer_module import cpu_kernels

cpu_kernels.prefer_onednn()
