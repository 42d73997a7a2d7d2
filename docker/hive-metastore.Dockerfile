# syntax=docker/dockerfile:1
# Apache Hive's metastore image plus what apache/hive does not put on the metastore's classpath:
# - PostgreSQL's JDBC driver (its docs bind-mount the jar from a local Maven repository
#   instead), from Debian's signed archive: a Java 8 build (the metastore image runs Java 8)
#   that bundles the SCRAM client PostgreSQL's default scram-sha-256 password authentication
#   needs;
# - Hadoop's S3A connector, so that the metastore accepts s3a:// table and partition locations
#   (it checks, and creates if missing, every location it is given): hadoop-aws of exactly the
#   image's Hadoop release (3.3.6 in apache/hive:4.0.1) and the AWS SDK bundle that release was
#   built against (1.12.367), from Maven Central, each checked against its published SHA-1.
#   A mismatched pair fails at run time with NoSuchMethodError or ClassNotFoundException, so
#   the build stops if the image's Hadoop is not HADOOP_VERSION.
ARG HIVE_VERSION=4.0.1
ARG HADOOP_VERSION=3.3.6
ARG AWS_SDK_BUNDLE_VERSION=1.12.367

FROM debian:bookworm-slim AS jars
ARG HADOOP_VERSION
ARG AWS_SDK_BUNDLE_VERSION
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates curl libpostgresql-jdbc-java \
    && mkdir /jars \
    && cp -L /usr/share/java/postgresql.jar /jars/postgres.jar
RUN set -eu; \
    maven=https://repo1.maven.org/maven2; \
    for artifact in \
        "org/apache/hadoop/hadoop-aws/${HADOOP_VERSION}/hadoop-aws-${HADOOP_VERSION}.jar" \
        "com/amazonaws/aws-java-sdk-bundle/${AWS_SDK_BUNDLE_VERSION}/aws-java-sdk-bundle-${AWS_SDK_BUNDLE_VERSION}.jar"; \
    do \
        jar="/jars/$(basename "$artifact")"; \
        curl --fail --silent --show-error --location --retry 3 -o "$jar" "$maven/$artifact"; \
        sha1="$(curl --fail --silent --show-error --location --retry 3 "$maven/$artifact.sha1" | cut -c1-40)"; \
        echo "$sha1  $jar" | sha1sum -c -; \
    done

FROM apache/hive:${HIVE_VERSION}
ARG HADOOP_VERSION
RUN test -f "/opt/hadoop/share/hadoop/common/hadoop-common-${HADOOP_VERSION}.jar" \
    || { echo "this image's Hadoop is not ${HADOOP_VERSION}: set HADOOP_VERSION and" \
              "AWS_SDK_BUNDLE_VERSION to its release and that release's SDK" >&2; exit 1; }
# The image's entrypoint runs `schematool -dbType postgres -initOrUpgradeSchema` with the
# SERVICE_OPTS connection, then the metastore; both take their jars from /opt/hive/lib.
COPY --from=jars /jars/ /opt/hive/lib/
# Hadoop reads core-site.xml from HADOOP_CONF_DIR, $HADOOP_HOME/etc/hadoop by default: where
# the S3A connector finds MinIO (the endpoint and the credentials come from the environment).
COPY metastore-core-site.xml /opt/hadoop/etc/hadoop/core-site.xml
