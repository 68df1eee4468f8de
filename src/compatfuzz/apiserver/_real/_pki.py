"""Certificates minted at start-up for a throw-away control plane, as envtest mints them.

envtest (controller-runtime ``pkg/internal/testing/controlplane/apiserver.go``,
``populateAPIServerCerts``, and ``pkg/internal/testing/certs/tinyca.go``) makes a small CA,
a serving certificate for 127.0.0.1/localhost, a service-account key pair, and logs its
client in with a certificate of the group ``system:masters``. compatfuzz does the same,
plus one serving certificate for the conversion webhook it serves, so the CRD's
``caBundle`` is a real CA and the API server checks the webhook's TLS as in a cluster.
Keys are EC P-256 (quick to make; the API server accepts them for every use here).
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compatfuzz.errors import InvalidArgument

__all__ = ["CA", "Pair", "mint"]


def _need_cryptography() -> None:
    try:
        import cryptography  # noqa: F401
    except ImportError:
        raise InvalidArgument(
            "the real API server backend needs the 'cryptography' package to mint its "
            "certificates; install it with: pip install 'compatfuzz[apiserver]'") from None


@dataclass(frozen=True)
class Pair:
    """A certificate and its key, as files."""

    cert: Path
    key: Path


@dataclass(frozen=True)
class CA:
    """The certificates of one control plane (all files under one directory)."""

    ca: Path  # the CA certificate: trusted by the client, the webhook's caBundle
    serving: Pair  # kube-apiserver's serving certificate
    webhook: Pair  # compatfuzz's conversion webhook's serving certificate
    client: Pair  # the admin client (O=system:masters)
    # etcd's own CA: etcd trusts only it, and only kube-apiserver holds a client
    # certificate of it (a certificate of the CA above, the admin's, cannot reach etcd)
    etcd_ca: Path
    etcd: Pair  # etcd's serving (and peer) certificate
    etcd_client: Pair  # kube-apiserver's client certificate for etcd
    sa_key: Path  # service-account signing key (and its public half in sa_pub)
    sa_pub: Path

    def bundle(self) -> bytes:
        """The CA in PEM, what a CRD's ``caBundle`` carries (base64 of this)."""
        return self.ca.read_bytes()


def mint(directory: Path) -> CA:
    """Write a CA and the certificates of one control plane into ``directory``."""
    _need_cryptography()
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)
    start, end = now - datetime.timedelta(hours=1), now + datetime.timedelta(days=7)

    def key() -> ec.EllipticCurvePrivateKey:
        return ec.generate_private_key(ec.SECP256R1())

    def write_key(k: ec.EllipticCurvePrivateKey, name: str) -> Path:
        path = directory / name
        path.write_bytes(k.private_bytes(serialization.Encoding.PEM,
                                         serialization.PrivateFormat.PKCS8,
                                         serialization.NoEncryption()))
        path.chmod(0o600)
        return path

    def write_cert(c: x509.Certificate, name: str) -> Path:
        path = directory / name
        path.write_bytes(c.public_bytes(serialization.Encoding.PEM))
        return path

    def authority(common: str) -> tuple[Any, Any, x509.Certificate]:
        k = key()
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])
        cert = (
            x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(k.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(start).not_valid_after(end)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True,
                                         crl_sign=True, content_commitment=False,
                                         key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False,
                                         decipher_only=False), critical=True)
            .sign(k, hashes.SHA256())
        )
        return k, name, cert

    ca_key, ca_name, ca_cert = authority("compatfuzz-ca")
    etcd_ca_key, etcd_ca_name, etcd_ca_cert = authority("compatfuzz-etcd-ca")

    def leaf(name: str, *, common: str, org: str | None, server: bool,
             client: bool = False, etcd: bool = False) -> Pair:
        k = key()
        attrs = [x509.NameAttribute(NameOID.COMMON_NAME, common)]
        if org:
            attrs.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, org))
        usages = ([ExtendedKeyUsageOID.SERVER_AUTH] if server else []) + (
            [ExtendedKeyUsageOID.CLIENT_AUTH] if client or not server else [])
        builder = (
            x509.CertificateBuilder().subject_name(x509.Name(attrs))
            .issuer_name(etcd_ca_name if etcd else ca_name)
            .public_key(k.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(start).not_valid_after(end)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
        )
        if server:
            builder = builder.add_extension(x509.SubjectAlternativeName([
                x509.DNSName("localhost"),
                x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
            ]), critical=False)
        cert = builder.sign(etcd_ca_key if etcd else ca_key, hashes.SHA256())
        return Pair(write_cert(cert, f"{name}.crt"), write_key(k, f"{name}.key"))

    sa = key()
    sa_pub = directory / "sa.pub"
    sa_pub.write_bytes(sa.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    return CA(
        ca=write_cert(ca_cert, "ca.crt"),
        serving=leaf("apiserver", common="kube-apiserver", org=None, server=True),
        webhook=leaf("webhook", common="compatfuzz-webhook", org=None, server=True),
        client=leaf("admin", common="compatfuzz-admin", org="system:masters", server=False),
        etcd_ca=write_cert(etcd_ca_cert, "etcd-ca.crt"),
        etcd=leaf("etcd", common="etcd", org=None, server=True, client=True, etcd=True),
        etcd_client=leaf("apiserver-etcd-client", common="kube-apiserver", org=None,
                         server=False, etcd=True),
        sa_key=write_key(sa, "sa.key"),
        sa_pub=sa_pub,
    )
