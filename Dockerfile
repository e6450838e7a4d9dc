# Multi-stage build: a static ccload binary in a small non-root image, for
# a Docker engine that can pull golang and distroless. `make image` builds
# the same image offline from the release binary (.ci/Containerfile): same user
# id (65532), paths, port and entrypoint. This file needs those registry
# pulls, so it is not built where only the release image is.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# modernc.org/sqlite is pure Go, so the binary is static with CGO off.
# `ccload version` shows VERSION, COMMIT and DATE:
#   docker build --build-arg VERSION=$(git describe --tags --always --dirty) \
#     --build-arg COMMIT=$(git rev-parse HEAD) --build-arg DATE=$(date -u +%FT%TZ) .
ARG VERSION=
ARG COMMIT=
ARG DATE=
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false \
      -ldflags="-s -w -buildid= -X main.version=${VERSION} -X main.commit=${COMMIT} -X main.date=${DATE}" \
      -o /out/ccload . \
 && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ccload /usr/local/bin/ccload
# distroless's nonroot user is 65532, the release image's ccload user.
COPY --from=build --chown=65532:65532 /out/data /data
WORKDIR /data
USER 65532:65532
EXPOSE 8080
# Mount the config at /etc/ccload/ccload.yaml (a ConfigMap or a bind mount);
# it is watched and hot-reloaded. Set storage.dsn to a path under /data.
# `ccload init -` prints the example config the binary carries.
ENTRYPOINT ["/usr/local/bin/ccload"]
CMD ["serve", "-c", "/etc/ccload/ccload.yaml", "--listen", "0.0.0.0:8080"]
