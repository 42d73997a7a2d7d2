# syntax=docker/dockerfile:1
# Apache Hive's metastore image plus PostgreSQL's JDBC driver, which apache/hive does not ship
# (its docs bind-mount the jar from a local Maven repository instead). The driver comes from
# Debian's signed archive: a Java 8 build (the metastore image runs Java 8) that bundles the
# SCRAM client PostgreSQL's default scram-sha-256 password authentication needs.
ARG HIVE_VERSION=4.0.1

FROM debian:bookworm-slim AS jdbc
RUN apt-get update \
    && apt-get install -y --no-install-recommends libpostgresql-jdbc-java \
    && cp -L /usr/share/java/postgresql.jar /postgresql.jar

FROM apache/hive:${HIVE_VERSION}
# The image's entrypoint runs `schematool -dbType postgres -initOrUpgradeSchema` with the
# SERVICE_OPTS connection, then the metastore; both look for the driver in /opt/hive/lib.
COPY --from=jdbc /postgresql.jar /opt/hive/lib/postgres.jar
