"""Domain adaptation of the generator: LoRA on CPU, QLoRA (4-bit NF4) on CUDA."""
