# Dockerfile -- the sluice image for Docker/BuildKit users; the same image .ci/build-image writes.
# SPDX-License-Identifier: Apache-2.0
#
#   docker build -t sluice:0.1.0 .
#
# Build stage: Debian 12 with the build dependencies (.ci/install-deps), sluice built Release and
# installed stripped, then .ci/image-rootfs assembles the runtime root filesystem from this
# stage's Debian packages (the binary, exactly the libraries ldd lists, CA certificates, user
# 65532). Final stage: that root filesystem alone. No shell in the image.
# test/image/dockerfile-sync.sh checks this file against .ci/build-image (script, user,
# entrypoint, cmd, workdir, labels, version); keep both in step.
# Reproducible timestamps: docker buildx build --build-arg SOURCE_DATE_EPOCH=$(git log -1 --format=%ct) .

FROM debian:bookworm AS build
ARG SOURCE_DATE_EPOCH
WORKDIR /src
COPY . .
RUN ./.ci/install-deps
RUN cmake -S . -B /build -DCMAKE_BUILD_TYPE=Release -DSLUICE_INTEGRATION=OFF \
        -DSLUICE_SANITIZE=OFF -DSLUICE_FUZZ=OFF -DCMAKE_C_FLAGS=-ffile-prefix-map=/src=. \
    && cmake --build /build -j"$(nproc)" --target sluice \
    && cmake --install /build --prefix /stage --strip
RUN ./.ci/image-rootfs /stage/bin/sluice /rootfs

FROM scratch
COPY --from=build /rootfs/ /
USER 65532:65532
WORKDIR /
ENTRYPOINT ["/usr/bin/sluice"]
CMD ["run"]
LABEL org.opencontainers.image.title="sluice" \
      org.opencontainers.image.version="0.1.0" \
      org.opencontainers.image.licenses="Apache-2.0"
