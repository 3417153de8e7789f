# restmcp as a small static image.
#
#   docker build -t restmcp .
#   docker run --rm -p 8080:8080 restmcp      # the shipped mock Petstore at http://localhost:8080/mcp
#
# Stage 1 builds a fully static binary against musl (Alpine's Rust toolchain targets musl
# and links statically by default; the crate uses rustls with ring and mimalloc, no OpenSSL).
# Stage 2 is distroless/static: no shell, no package manager, but the CA certificates restmcp's
# HTTP client needs (it refuses to start without a root store, even with every API mocked)
# and a non-root user.

ARG RUST_VERSION=1.95

FROM rust:${RUST_VERSION}-alpine AS build
RUN apk add --no-cache musl-dev
WORKDIR /src
# A stripped binary without debug info (release builds carry none since Cargo.toml's
# 2026-11-28 profile change; kept here so the image does not depend on it): about 23 MB.
ENV CARGO_PROFILE_RELEASE_DEBUG=false \
    CARGO_PROFILE_RELEASE_STRIP=symbols

# Dependencies first, in a layer of their own that only Cargo.toml and Cargo.lock invalidate:
# a placeholder crate with the same manifest (every [[bench]] target must exist for it to parse).
COPY Cargo.toml Cargo.lock ./
RUN mkdir -p src benches \
    && echo 'fn main() {}' > src/main.rs \
    && touch src/lib.rs \
    && for bench in loader hot_path; do echo 'fn main() {}' > "benches/$bench.rs"; done \
    && cargo build --release --locked \
    && rm -rf src benches

# The crate itself. Its files may keep modification times older than the placeholder's
# build, so the crate roots are touched to make cargo rebuild the crate.
COPY src src
COPY schemas schemas
COPY benches benches
RUN touch src/main.rs src/lib.rs \
    && cargo build --release --locked \
    && cp target/release/restmcp /restmcp \
    && /restmcp --version

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /restmcp /usr/local/bin/restmcp
WORKDIR /app
COPY config.toml ./
COPY specs ./specs
COPY workflows ./workflows
# The server binds loopback unless told otherwise; in a container it must listen on all
# interfaces. Requests to /mcp are still checked against server.allowed_hosts (default
# localhost, 127.0.0.1, ::1: enough for `docker run -p 8080:8080` used from the same
# machine). Behind any other name, list it (a TOML array; [] accepts any Host):
#   docker run -e RESTMCP_SERVER__ALLOWED_HOSTS='["mcp.example.com"]' ...
ENV RESTMCP_SERVER__LISTEN=0.0.0.0:8080
EXPOSE 8080
# 65532 is distroless's "nonroot"; numeric, so Kubernetes' runAsNonRoot can verify it.
USER 65532:65532
# No HEALTHCHECK: the image has no shell or curl to run one. GET /healthz (liveness) and
# /readyz (readiness) on port 8080 are for the orchestrator's probes.
ENTRYPOINT ["/usr/local/bin/restmcp"]
CMD ["serve"]
