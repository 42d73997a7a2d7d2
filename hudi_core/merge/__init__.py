"""Record mergers (payloads): how versions of the same record combine."""
