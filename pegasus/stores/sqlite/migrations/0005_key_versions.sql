-- A version per owner, raised by any write to the owner's keys: a search reads
-- one row to know whether the keys it holds in memory are still current (a
-- fingerprint of the key rows read all of them: 11 ms at 140k keys, paid by the
-- first recall after every write, a used-edge note included).
CREATE TABLE key_versions (user TEXT PRIMARY KEY, version INTEGER NOT NULL);
CREATE TRIGGER key_added AFTER INSERT ON keys BEGIN
    INSERT INTO key_versions VALUES (new.user, 1)
    ON CONFLICT (user) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER key_changed AFTER UPDATE ON keys BEGIN
    INSERT INTO key_versions VALUES (new.user, 1)
    ON CONFLICT (user) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER key_removed AFTER DELETE ON keys BEGIN
    INSERT INTO key_versions VALUES (old.user, 1)
    ON CONFLICT (user) DO UPDATE SET version = version + 1;
END;
INSERT INTO key_versions SELECT DISTINCT user, 1 FROM keys;
