-- Claims are found by their words too: a full-text index over the claim keys'
-- text (names, relation and snippet), kept in step with the keys by triggers.
CREATE VIRTUAL TABLE claim_words USING fts5(
    text, content='keys', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER claim_words_added AFTER INSERT ON keys WHEN new.kind = 'claim' BEGIN
    INSERT INTO claim_words (rowid, text) VALUES (new.rowid, new.text);
END;
CREATE TRIGGER claim_words_removed AFTER DELETE ON keys WHEN old.kind = 'claim' BEGIN
    INSERT INTO claim_words (claim_words, rowid, text)
    VALUES ('delete', old.rowid, old.text);
END;
CREATE TRIGGER claim_words_changed AFTER UPDATE ON keys BEGIN
    INSERT INTO claim_words (claim_words, rowid, text)
    SELECT 'delete', old.rowid, old.text WHERE old.kind = 'claim';
    INSERT INTO claim_words (rowid, text)
    SELECT new.rowid, new.text WHERE new.kind = 'claim';
END;
INSERT INTO claim_words (rowid, text) SELECT rowid, text FROM keys WHERE kind = 'claim';
