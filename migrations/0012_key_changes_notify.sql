-- API keys are looked up from an in-process cache (src/platform/keys/key-cache.ts). Whatever
-- changes who a token is — a key revoked, reinstated, moved or deleted, an account's admin flag
-- or the account itself — tells every replica to drop its cache, whichever way the change was
-- made (API, CLI, bootstrap, plain SQL). `UPDATE OF` lists the columns: the once-a-minute
-- last_used_at update does not fire it. These changes are rare, so the NOTIFY inside their
-- transaction costs nothing that matters (see QueueSignal.ts for why busy paths avoid that).
CREATE FUNCTION herald_keys_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('herald_keys', '');
  RETURN NULL;
END
$$;

CREATE TRIGGER api_keys_changed AFTER UPDATE OF revoked_at, token_hash, account_id OR DELETE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION herald_keys_changed();

CREATE TRIGGER accounts_admin_changed AFTER UPDATE OF is_admin OR DELETE ON accounts
  FOR EACH STATEMENT EXECUTE FUNCTION herald_keys_changed();
