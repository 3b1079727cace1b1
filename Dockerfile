# hase as a container image (Debian bookworm): `docker build -t example.org/hase:0.1.0 .`
# Build stage: the Debian -dev packages of tools/install-deps.sh minus the test-only ones,
# then only the `hase` target (no tests, benchmarks, probe or tools) and `cmake --install`.
# Runtime stage: the shared libraries `hase` links (ldd build/src/cli/hase | dpkg -S) and the
# installed tree /opt/hase (bin/hase, share/hase/{models,data,examples,deploy}).
FROM debian:bookworm AS build
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake pkg-config \
      libprotobuf-dev protobuf-compiler libonnx-dev \
      libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libfmt-dev libspdlog-dev \
      libxgboost-dev zlib1g-dev libsqlite3-dev libglpk-dev libcpp-httplib-dev libssl-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cmake -S . -B /build -DCMAKE_BUILD_TYPE=Release -DHASE_BUILD_TESTS=OFF -DHASE_BUILD_BENCH=OFF \
      -DHASE_BUILD_PROBE=OFF -DHASE_BUILD_TOOLS=OFF \
    && cmake --build /build -j"$(nproc)" --target hase \
    && cmake --install /build --prefix /opt/hase

FROM debian:bookworm-slim
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates libcpp-httplib0.11 libfmt9 libglpk40 libonnx1 libprotobuf32 libspdlog1.10 \
      libsqlite3-0 libssl3 libxgboost0 libyaml-cpp0.7 zlib1g libbrotli1 \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /opt/hase /opt/hase
ENV PATH=/opt/hase/bin:$PATH
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/opt/hase/bin/hase"]
CMD ["serve", "--help"]
