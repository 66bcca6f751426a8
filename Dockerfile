# racesim's image, for running sweeps on Kubernetes (scripts/cluster/k8s/): Debian 12 with the
# project built by scripts/setup.sh, racesim on PATH and the scenarios in /opt/racesim/scenarios.
# The checkout's .git comes along so that results name the commit they were run by (merge never
# joins the results of two builds).
#
#   docker build -t racesim:latest .
FROM debian:12
COPY . /src/racesim
WORKDIR /src/racesim
RUN rm -rf build build-asan \
 && scripts/setup.sh \
 && install -m 755 build/racesim /usr/local/bin/racesim \
 && mkdir -p /opt/racesim \
 && cp -r scenarios /opt/racesim/scenarios \
 && rm -rf build /var/lib/apt/lists/*
WORKDIR /
ENTRYPOINT []
CMD ["racesim", "--help"]
