-- A version per owner, raised by any write to the owner's nodes, edges or self
-- node: a service holding the owner's graph in memory (graph_copy.py) reads
-- one row to know whether its copy is still current.
CREATE TABLE graph_versions (user TEXT PRIMARY KEY, version INTEGER NOT NULL);

CREATE TRIGGER nodes_insert AFTER INSERT ON nodes BEGIN
    INSERT INTO graph_versions VALUES (new.user, 1)
    ON CONFLICT (user) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER nodes_update AFTER UPDATE ON nodes BEGIN
    INSERT INTO graph_versions VALUES (new.user, 1)
    ON CONFLICT (user) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER nodes_delete AFTER DELETE ON nodes BEGIN
    INSERT INTO graph_versions VALUES (old.user, 1)
    ON CONFLICT (user) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER edges_insert AFTER INSERT ON edges BEGIN
    INSERT INTO graph_versions VALUES (new.user, 1)
    ON CONFLICT (user) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER edges_update AFTER UPDATE ON edges BEGIN
    INSERT INTO graph_versions VALUES (new.user, 1)
    ON CONFLICT (user) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER edges_delete AFTER DELETE ON edges BEGIN
    INSERT INTO graph_versions VALUES (old.user, 1)
    ON CONFLICT (user) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER owners_insert AFTER INSERT ON owners BEGIN
    INSERT INTO graph_versions VALUES (new.user, 1)
    ON CONFLICT (user) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER owners_update AFTER UPDATE ON owners BEGIN
    INSERT INTO graph_versions VALUES (new.user, 1)
    ON CONFLICT (user) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER owners_delete AFTER DELETE ON owners BEGIN
    INSERT INTO graph_versions VALUES (old.user, 1)
    ON CONFLICT (user) DO UPDATE SET version = version + 1;
END;
INSERT INTO graph_versions SELECT DISTINCT user, 1 FROM nodes;
