"""`python -m simpler devices`: the devices chips may drive on this machine, as
`clinfo` would list them (platform, name, the driver's version, memory, compute
units, whether kernels use host memory in place), in the order
Worker(device="opencl") gives them to chips, then the CUDA devices as the driver reports them (name,
UUID, the driver's version and compute capability, memory, multiprocessors) and the NVRTC CUDA chips
compile with. The devices are asked for in a throwaway child process (as Worker.init() asks), so this
process opens no device API (NVRTC keeps no device state: it is asked here). When none is found, it
says why and what to install, and exits 1."""

from typing import TextIO

from simpler._core import DeviceFacts, DeviceKind, find_devices, nvrtc_version

INSTALL_HINT = (
    "To drive a device, install an OpenCL ICD loader and a driver for it. Debian/Ubuntu: apt-get install "
    "ocl-icd-libopencl1 and one of pocl-opencl-icd (any CPU), the GPU vendor's OpenCL driver (NVIDIA: the "
    "driver's libnvidia-opencl.so.1, listed in /etc/OpenCL/vendors/nvidia.icd; AMD: ROCm's rocm-opencl-runtime; "
    "Intel: intel-opencl-icd). The loader reads the drivers listed in /etc/OpenCL/vendors, or in the folder "
    "OCL_ICD_VENDORS names. Without one, chips run on the simulated device (the default)."
)


def _size(nbytes: int) -> str:
    gib = nbytes / (1 << 30)
    return f"{gib:.1f} GiB" if gib >= 1 else f"{nbytes / (1 << 20):.0f} MiB"


def _describe(i: int, d: DeviceFacts, out: TextIO) -> None:
    print(f"  device {i}: {d.name}", file=out)
    print(f"    platform:       {d.platform}", file=out)
    if d.uuid:
        print(f"    uuid:           {d.uuid}", file=out)
    print(f"    version:        {d.version or '(the driver gives none)'}", file=out)
    print(f"    memory:         {_size(d.memory_bytes)} ({d.memory_bytes} bytes)", file=out)
    units = " (multiprocessors)" if d.kind == DeviceKind.CUDA else ""
    print(f"    compute units:  {d.compute_units}{units}", file=out)
    shared = (
        "shared (zero-copy runs use it in place)"
        if d.unified_host_memory
        else "separate (every run stages host arguments)"
    )
    print(f"    host memory:    {shared}", file=out)


def run(platform: str, out: TextIO) -> int:
    """Lists the OpenCL devices whose platform's name contains `platform` (any
    case; empty: every platform) on `out`, then the CUDA line. 0 when at least
    one device is found, 1 with the reasons and what to install otherwise."""
    print(
        'simulated: always available (Worker(device="simulated"), the default): each chip is its own process', file=out
    )
    opencl = _opencl(platform, out)
    cuda = _cuda(out)
    return 0 if opencl or cuda else 1


def _cuda(out: TextIO) -> bool:
    """The CUDA devices and NVRTC, or why there are none (a build that knows no CUDA says so, and
    whether the driver is on this machine)."""
    try:
        found = find_devices(DeviceKind.CUDA)
    except RuntimeError as e:
        print(f"cuda: none. {e}", file=out)
        return False
    print(
        f'cuda: {len(found)} device{"s" if len(found) != 1 else ""}, in the order Worker(device="cuda") will '
        'give them to chips (this version runs no chip on one yet: Worker(device="opencl") runs NVIDIA GPUs '
        "through their OpenCL driver); device_platform chooses by a part of the name or the UUID's beginning",
        file=out,
    )
    for i, d in enumerate(found):
        _describe(i, d, out)
    try:
        major, minor = nvrtc_version()
        print(f"  nvrtc: {major}.{minor} (compiles the kernels of CUDA chips)", file=out)
    except RuntimeError as e:
        print(f"  nvrtc: none. {e}", file=out)
    return True


def _opencl(platform: str, out: TextIO) -> bool:
    try:
        found = find_devices(DeviceKind.OPENCL, platform)
    except RuntimeError as e:
        print(f"opencl: none found. {e}", file=out)
        print(INSTALL_HINT, file=out)
        return False
    platforms = sorted({d.platform for d in found})
    print(
        f"opencl: {len(found)} device{'s' if len(found) != 1 else ''} on {len(platforms)} "
        f'platform{"s" if len(platforms) != 1 else ""}, in the order Worker(device="opencl") gives them to '
        f"chips (chip i takes device i modulo {len(found)})",
        file=out,
    )
    for i, d in enumerate(found):
        _describe(i, d, out)
    return True
