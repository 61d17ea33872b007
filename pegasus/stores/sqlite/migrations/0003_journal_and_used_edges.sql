-- The journal and the used edges of a conversation get tables of their own:
-- appending a journal line or noting a used edge no longer rewrites the
-- record, and concurrent notes merge instead of overwriting each other.
CREATE TABLE journal_lines (
    user TEXT NOT NULL, conversation TEXT NOT NULL, seq INTEGER NOT NULL,
    line TEXT NOT NULL,
    PRIMARY KEY (user, conversation, seq)
);
CREATE TABLE used_edges (
    user TEXT NOT NULL, conversation TEXT NOT NULL, edge TEXT NOT NULL,
    PRIMARY KEY (user, conversation, edge)
);
INSERT INTO journal_lines
    SELECT c.user, c.id, j.key, j.value FROM conversations AS c,
    json_each(c.record, '$.journal') AS j;
INSERT OR IGNORE INTO used_edges
    SELECT c.user, c.id, u.value FROM conversations AS c,
    json_each(c.record, '$.used_edges') AS u;
UPDATE conversations SET record = json_remove(record, '$.journal', '$.used_edges');
