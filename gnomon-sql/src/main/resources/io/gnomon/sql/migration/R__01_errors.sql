-- Gnomon's SQLSTATE registry. The Java enum io.gnomon.sql.GnomonSqlState mirrors these rows; a test checks both agree.
insert into gnomon.error_code (sqlstate, name, retryable, meaning) values
  ('GN001', 'TABLE_NOT_TRACKED',        false, 'The table is not tracked by Gnomon.'),
  ('GN002', 'TABLE_ALREADY_TRACKED',    false, 'The table is already tracked by Gnomon.'),
  ('GN003', 'NO_PRIMARY_KEY',           false, 'The table has no primary key; Gnomon needs one to identify rows.'),
  ('GN004', 'UNSUPPORTED_RELATION',     false, 'The relation cannot be tracked: a view, foreign, temporary or partition-child table.'),
  ('GN005', 'UNSUPPORTED_COLUMN_TYPE',  false, 'A column has a type Gnomon cannot version (no equality operator).'),
  ('GN006', 'UNSUPPORTED_DDL',          false, 'A schema change on a tracked table would break versioning and was refused.'),
  ('GN007', 'TABLE_NOT_FOUND',          false, 'No table has that name.'),
  ('GN010', 'MALFORMED_COORDINATE',     false, 'The text is not a Gnomon coordinate.'),
  ('GN011', 'COORDINATE_IN_FUTURE',     false, 'The coordinate or timestamp is later than what this transaction can see.'),
  ('GN012', 'COORDINATE_TOO_OLD',       false, 'The coordinate or timestamp is older than the history Gnomon keeps for the table.'),
  ('GN013', 'COORDINATE_LOST_IN_FAULT', false, 'The coordinate was captured before a crash or failover, after the last tick that survived it: reads as of it cannot be exact.'),
  ('GN020', 'CATALOG_VERSION_MISMATCH', false, 'The installed Gnomon catalog has another version than this library.'),
  ('GN021', 'INVALID_ARGUMENT',         false, 'An argument to a Gnomon function is invalid.'),
  ('GN030', 'CONSUMER_NOT_FOUND',       false, 'No change-feed consumer has that name.'),
  ('GN031', 'CONSUMER_EXISTS',          false, 'A change-feed consumer with that name is already registered.'),
  ('GN032', 'CONSUMER_EXPIRED',         false, 'The consumer fell behind further than its limit and was expired.'),
  ('GN033', 'INVALID_POSITION',         false, 'The feed position is malformed, belongs to no delivered page, or goes backwards.'),
  ('GN034', 'BRANCH_FOLLOWED',          false, 'A change-feed consumer follows the branch; unregister it before dropping the branch.'),
  ('GN040', 'MERGE_LIMIT_EXCEEDED',     false, 'A merge input exceeds a configured limit (json: nesting depth or number of nodes); nothing was merged.'),
  ('GN050', 'BRANCH_NOT_FOUND',         false, 'No branch has that name, or the selected branch was dropped.'),
  ('GN051', 'BRANCH_EXISTS',            false, 'A branch with that name already exists.'),
  ('GN052', 'BRANCH_HAS_CHILDREN',      false, 'The branch has child branches; drop them first or ask for a cascade.'),
  ('GN053', 'BRANCH_LOST',              false, 'The scratch branch was emptied by a crash or a failover of the server.'),
  ('GN054', 'NO_BRANCH_SELECTED',       false, 'A branch view was used without selecting a branch.'),
  ('GN060', 'INVALID_MERGE',            false, 'The merge cannot run: a branch into itself, or tables that cannot be merged.'),
  ('GN061', 'UNKNOWN_STRATEGY',         false, 'No merge strategy has that name.'),
  ('GN062', 'STRATEGY_TYPE_MISMATCH',   false, 'The merge strategy does not fit the column''s type.'),
  ('GN063', 'MERGE_NOT_FOUND',          false, 'No merge, or no conflict of that merge, matches.'),
  ('GN070', 'C_MODULE_UNAVAILABLE',     false, 'The optional C module cannot be loaded (missing library, no superuser, or another interface version).'),
  ('GN071', 'C_TRIGGER_MISUSE',         false, 'The C write trigger fired where Gnomon did not install it, or the table''s generated objects are missing.')
on conflict (sqlstate) do update
  set name = excluded.name, retryable = excluded.retryable, meaning = excluded.meaning;
-- codes removed from this file leave the registry too
delete from gnomon.error_code where sqlstate not in ('GN001', 'GN002', 'GN003', 'GN004', 'GN005', 'GN006', 'GN007',
  'GN010', 'GN011', 'GN012', 'GN013', 'GN020', 'GN021', 'GN030', 'GN031', 'GN032', 'GN033', 'GN034',
  'GN040', 'GN050', 'GN051', 'GN052', 'GN053', 'GN054', 'GN060', 'GN061', 'GN062', 'GN063', 'GN070', 'GN071');
