"""QEMU guests as VNFs: vhost-user (OVS-DPDK) and virtio-net (tap) backends and the guest image."""
