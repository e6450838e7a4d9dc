# Multi-stage build: a static ccload binary in a small non-root image.
# (Not built in the development environment, which has no Docker engine.)
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# modernc.org/sqlite is pure Go, so the binary is static with CGO off.
# `ccload version` shows COMMIT and DATE:
#   docker build --build-arg COMMIT=$(git rev-parse HEAD) --build-arg DATE=$(date -u +%FT%TZ) .
ARG COMMIT=
ARG DATE=
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X main.commit=${COMMIT} -X main.date=${DATE}" -o /out/ccload . \
 && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ccload /usr/local/bin/ccload
COPY --from=build --chown=nonroot:nonroot /out/data /data
WORKDIR /data
USER nonroot:nonroot
EXPOSE 8080
# Mount the config at /etc/ccload/ccload.yaml (a ConfigMap or a bind mount);
# it is watched and hot-reloaded. Set storage.dsn to a path under /data.
ENTRYPOINT ["/usr/local/bin/ccload"]
CMD ["serve", "-c", "/etc/ccload/ccload.yaml", "--listen", "0.0.0.0:8080"]
