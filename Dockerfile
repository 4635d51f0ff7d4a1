# syntax=docker/dockerfile:1
# pinprobe's release image: the static (musl) binary and nothing else but a CA bundle (for
# docker:// registries and fetching pinned history). Built by .github/workflows/release.yml from
# a context it assembles: linux/{amd64,arm64}/pinprobe from the release archives, the runner's
# ca-certificates.crt and an empty tmp/. No shell, no package manager, runs as an unprivileged user.
#   docker run --rm -v "$PWD:/src:ro" ghcr.io/OWNER/pinprobe:VERSION scan /src
FROM scratch
ARG TARGETPLATFORM
COPY --chmod=0755 ${TARGETPLATFORM}/pinprobe /usr/local/bin/pinprobe
COPY --chmod=0644 ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
# A writable /tmp for the fetch cache (scratch has no directories at all).
COPY --chown=65532:65532 tmp/ /tmp/
ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
    PINPROBE_CACHE=/tmp/pinprobe
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/pinprobe"]
