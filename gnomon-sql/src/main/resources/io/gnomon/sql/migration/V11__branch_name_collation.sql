-- Gnomon catalog, version 11: branch names compare byte by byte.
--
-- A branch name is an identifier, like a table's name in pg_class (type name, collation "C"): the catalog's unique
-- index on it only needs equality, and every collation PostgreSQL 15 can use as a database's default is
-- deterministic, so two names are equal exactly when their bytes are, in "C" as in the database's collation. What the
-- collation changes is the cost of each comparison in that index: "C" compares bytes (memcmp), a libc collation other
-- than C or POSIX (en_US.UTF-8, and C.UTF-8 too, which PostgreSQL 15 does not treat as "C") copies both strings and
-- calls strcoll. A branch's creation makes about 18 of them on its way down the name index: 2,500 instructions of the
-- 64,600 a create costs (callgrind, 350,000 branches). gnomon.branches() still lists names in the database's order.
alter table gnomon.branch alter column branch_name type text collate "C";

create or replace function gnomon.catalog_version() returns integer language sql immutable as 'select 11';
