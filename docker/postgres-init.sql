-- Runs once, when the postgres container initialises an empty data volume (mounted into
-- /docker-entrypoint-initdb.d by docker-compose.yaml). The Airflow metadata database (which
-- also holds the Hudi lock table, created by the lock provider on first use) comes from
-- POSTGRES_DB; this adds the Hive metastore's own role and database, kept apart so that
-- the metastore's schema tool never touches Airflow's tables.
-- The password comes from the container's environment (psql 15+ reads it with \getenv), so
-- that it is set in one place: HIVE_METASTORE_DB_PASSWORD in docker-compose.yaml.

\set ON_ERROR_STOP on
\getenv hive_password HIVE_METASTORE_DB_PASSWORD
\if :{?hive_password}
\else
  -- Stop with an error rather than create a role without a password.
  DO $$ BEGIN RAISE EXCEPTION 'HIVE_METASTORE_DB_PASSWORD is not set in the postgres container'; END $$;
\endif

CREATE ROLE hive LOGIN PASSWORD :'hive_password';
-- Owned by its role: on PostgreSQL 15+ only the owner may create tables in the public schema.
CREATE DATABASE metastore_db OWNER hive;
