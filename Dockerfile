# syntax=docker/dockerfile:1
# svc as a container: the pinned Bun compiles the one binary, which then runs alone, as a non-root
# user, on a minimal glibc base.

FROM oven/bun:1.4.5 AS build
WORKDIR /src
COPY package.json bun.lock bunfig.toml tsconfig.json ./
# @svc/client is a workspace of the project's: the console is built on it.
COPY client/package.json ./client/
RUN bun install --frozen-lockfile
COPY src ./src
COPY client/src ./client/src
COPY schema ./schema
COPY drizzle ./drizzle
RUN bun run build && mkdir -p /data

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /src/dist/svc /usr/local/bin/svc
COPY --from=build --chown=nonroot:nonroot /data /data
WORKDIR /data
ENV SVC_ENV=production \
    SVC_DATABASE_URL=sqlite:/data/svc.db \
    SVC_HOST=0.0.0.0 \
    SVC_PORT=8080
USER nonroot
EXPOSE 8080
VOLUME ["/data"]
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 CMD ["/usr/local/bin/svc", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/svc"]
