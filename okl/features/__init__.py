"""Explicit feature maps approximating the Gaussian kernel: Taylor basis, random Fourier features."""
