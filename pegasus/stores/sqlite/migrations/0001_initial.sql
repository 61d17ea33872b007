CREATE TABLE nodes (
    user TEXT NOT NULL, id TEXT NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL,
    aliases TEXT NOT NULL, properties TEXT NOT NULL, confidence REAL NOT NULL,
    conversations TEXT NOT NULL, provisional INTEGER NOT NULL,
    created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
    PRIMARY KEY (user, id)
);
CREATE TABLE node_names (
    user TEXT NOT NULL, node_id TEXT NOT NULL, name TEXT NOT NULL,
    PRIMARY KEY (user, name, node_id)
);
CREATE INDEX node_names_by_node ON node_names (user, node_id);
CREATE TABLE edges (
    user TEXT NOT NULL, id TEXT NOT NULL, source TEXT NOT NULL, target TEXT NOT NULL,
    relation TEXT NOT NULL, strength REAL NOT NULL, strength0 REAL NOT NULL,
    touched_at INTEGER NOT NULL, confidence REAL NOT NULL, stability TEXT NOT NULL,
    cardinality TEXT NOT NULL, expires_at INTEGER, snippet TEXT NOT NULL,
    evidence TEXT NOT NULL, properties TEXT NOT NULL, conversations TEXT NOT NULL,
    superseded_by TEXT, dormant INTEGER NOT NULL, expired INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (user, id)
);
CREATE INDEX edges_by_source ON edges (user, source);
CREATE INDEX edges_by_target ON edges (user, target);
CREATE INDEX edges_by_relation ON edges (user, relation);
CREATE TABLE conversations (
    user TEXT NOT NULL, id TEXT NOT NULL, record TEXT NOT NULL,
    PRIMARY KEY (user, id)
);
CREATE TABLE owners (user TEXT PRIMARY KEY, self_id TEXT);
CREATE TABLE keys (
    user TEXT NOT NULL, id TEXT NOT NULL, text TEXT NOT NULL, ref TEXT NOT NULL,
    kind TEXT NOT NULL, vector BLOB NOT NULL,
    PRIMARY KEY (user, id)
);
CREATE INDEX keys_by_ref ON keys (user, ref);
