-- Schema changes on tracked tables: ADD COLUMN is followed (history and generated functions are extended);
-- anything else that would break versioning is refused with GN006, never silently mismatched.

-- Whether a table (with its partitions) holds a row, read without row-level security: the DDL guard may run as
-- the catalog's owner (gnomon.follow_table_change_as_owner), where a policy of the table would run its owner's code,
-- so a table whose policies would apply counts as one with rows.
create or replace function gnomon.table_has_rows(rel regclass) returns boolean
language plpgsql volatile set search_path = pg_catalog, pg_temp set row_security = off as $$
declare
  found_row boolean;
begin
  execute format('select exists (select from %s)', rel) into found_row;
  return found_row;
exception when insufficient_privilege then
  return true;
end $$;
comment on function gnomon.table_has_rows(regclass) is
  'Internal: whether a table holds a row (row-level security off; true when a policy would apply), for the DDL guard.';

-- Whether a value of type t, read from its text form, runs code a role could have written: a domain with
-- constraints anywhere inside a composite, an array or a range (a domain at the top is not counted: its value is
-- given to the history as its base type, see gnomon.table_columns' storetype). Base types read their text with C
-- functions only a superuser can create.
create or replace function gnomon.type_runs_code_on_input(t oid, top boolean default true) returns boolean
language plpgsql stable set search_path = pg_catalog, pg_temp as $$
declare
  ty pg_type;
begin
  select * into ty from pg_type where oid = t;
  if not found then
    return false;
  elsif ty.typtype = 'd' then
    if not top and exists (select from pg_constraint where contypid = t) then
      return true;
    end if;
    return gnomon.type_runs_code_on_input(ty.typbasetype, top);
  elsif ty.typtype = 'c' then
    return exists (select from pg_attribute a where a.attrelid = ty.typrelid and a.attnum > 0 and not a.attisdropped
                      and gnomon.type_runs_code_on_input(a.atttypid, false));
  elsif ty.typcategory = 'A' and ty.typelem <> 0 then
    return gnomon.type_runs_code_on_input(ty.typelem, false);
  elsif ty.typtype = 'r' then
    return gnomon.type_runs_code_on_input((select rngsubtype from pg_range where rngtypid = t), false);
  elsif ty.typtype = 'm' then
    return gnomon.type_runs_code_on_input((select rngsubtype from pg_range where rngmultitypid = t), false);
  end if;
  return false;
end $$;
comment on function gnomon.type_runs_code_on_input(oid, boolean) is
  'Internal: whether reading a value of the type from text runs a domain''s checks below its top (see gnomon.follow_table_change).';

create or replace function gnomon.follow_table_change(p_table_id integer) returns void
language plpgsql set client_min_messages = warning as $$
declare
  tt gnomon.tracked_table;
  cur_cols jsonb;
  cur_keys name[];
  cur_name name; cur_schema name;
  old_col jsonb; new_col jsonb;
  def text; missing boolean; filled text; computed text;
  tab text;
begin
  select * into tt from gnomon.tracked_table where table_id = p_table_id;
  tab := format('%I.%I', tt.schema_name, tt.table_name);
  select c.relname, n.nspname into cur_name, cur_schema from pg_class c join pg_namespace n on n.oid = c.relnamespace where c.oid = tt.relid;
  if cur_name is distinct from tt.table_name or cur_schema is distinct from tt.schema_name then
    raise exception using errcode = 'GN006',
      message = format('renaming tracked table %s (to %I.%I) is not supported', tab, cur_schema, cur_name),
      hint = format('Untrack it first (select gnomon.untrack(%L)), rename it, then track it again.', tab);
  end if;
  cur_cols := gnomon.table_columns(tt.relid);
  for old_col in select * from jsonb_array_elements(tt.columns) loop
    select c into new_col from jsonb_array_elements(cur_cols) c where (c->>'attnum') = (old_col->>'attnum');
    if new_col is null then
      raise exception using errcode = 'GN006',
        message = format('dropping column %I of tracked table %s is not supported', old_col->>'name', tab),
        hint = format('Untrack it first (select gnomon.untrack(%L)), or keep the column.', tab);
    elsif new_col->>'name' <> old_col->>'name' then
      raise exception using errcode = 'GN006',
        message = format('renaming column %I of tracked table %s to %I is not supported', old_col->>'name', tab, new_col->>'name'),
        hint = format('Untrack it first (select gnomon.untrack(%L)), or add a new column instead.', tab);
    elsif new_col->>'typid' <> old_col->>'typid' or new_col->>'type' <> old_col->>'type' then
      raise exception using errcode = 'GN006',
        message = format('changing the type of column %I of tracked table %s from %s to %s is not supported',
                         old_col->>'name', tab, old_col->>'type', new_col->>'type'),
        hint = format('Untrack it first (select gnomon.untrack(%L)), or add a new column of the new type.', tab);
    end if;
  end loop;
  select array_agg(a.attname order by k.ord) into cur_keys
    from pg_constraint con cross join lateral unnest(con.conkey) with ordinality k(attnum, ord)
    join pg_attribute a on a.attrelid = tt.relid and a.attnum = k.attnum
   where con.conrelid = tt.relid and con.contype = 'p';
  if cur_keys is distinct from tt.key_columns then
    raise exception using errcode = 'GN006',
      message = format('changing the primary key of tracked table %s is not supported', tab),
      detail = format('Gnomon identifies rows by (%s).', array_to_string(tt.key_columns, ', ')),
      hint = format('Untrack it first (select gnomon.untrack(%L)), change the key, then track it again.', tab);
  end if;
  -- nothing the generated objects depend on changed (an index, a default, a trigger's state, a setting...):
  -- regenerating them would take every object's lock and rewrite them for nothing. NOT NULL and CHECK constraints
  -- added or dropped are copied onto the branch table, so they hold on branches as they do on the table (with new
  -- columns, gnomon.install_branch_objects below does it once the branch table has them).
  if cur_cols = tt.columns then
    perform gnomon.sync_branch_constraints(p_table_id);
    return;
  end if;
  for new_col in select c from jsonb_array_elements(cur_cols) c
                  where not exists (select 1 from jsonb_array_elements(tt.columns) o where o->>'attnum' = c->>'attnum') loop
    if (new_col->>'name')::name = any (gnomon.reserved_column_names()) then
      raise exception using errcode = 'GN006',
        message = format('column %I of tracked table %s has a name Gnomon reserves for its history', new_col->>'name', tab),
        hint = format('Choose another name. Reserved: %s (select gnomon.reserved_column_names()).',
                      array_to_string(gnomon.reserved_column_names(), ', '));
    end if;
    if not gnomon.type_has_equality((new_col->>'typid')::oid) then
      raise exception using errcode = 'GN005',
        message = format('column %I of %s has type %s, which Gnomon cannot version', new_col->>'name', tab, new_col->>'type'),
        hint = 'Use a type with an equality operator (jsonb rather than json).';
    end if;
    -- Versions written before the column existed show the value existing rows got: a constant default, else NULL.
    -- That value is the one PostgreSQL computed for the table's rows (attmissingval, when the ALTER ran, as its
    -- role), given to the history as a literal: the default's expression is not evaluated again here, where this
    -- function may run as the catalog's owner (gnomon.follow_table_change_as_owner).
    select case when a.atthasmissing then (a.attmissingval::text::text[])[1] end,
           a.atthasmissing,
           case when not a.atthasmissing and a.attgenerated = '' then pg_get_expr(d.adbin, d.adrelid) end,
           case when a.attidentity <> '' then 'generated ' || case a.attidentity when 'a' then 'always' else 'by default' end || ' as identity'
                when a.attgenerated = 's' then format('generated always as (%s) stored', pg_get_expr(d.adbin, d.adrelid)) end
      into def, missing, filled, computed
      from pg_attribute a left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
     where a.attrelid = tt.relid and a.attnum = (new_col->>'attnum')::int;
    if missing then
      if gnomon.type_runs_code_on_input((new_col->>'typid')::oid) then
        raise exception using errcode = 'GN006',
          message = format('adding column %I of type %s to tracked table %s with a default is not supported',
                           new_col->>'name', new_col->>'type', tab),
          detail = 'The type holds a domain with constraints inside a composite, array or range, so giving the history '
                   || 'the value existing rows got would run that domain''s checks again.',
          hint = format('Add the column without a default, fill it with an UPDATE (which is versioned), then set the '
                        || 'default: alter table %1$s add column %2$I ...; update %1$s set %2$I = ...; '
                        || 'alter table %1$s alter column %2$I set default ...;', tab, new_col->>'name');
      end if;
      def := case when def is null then 'null' else format('%L::%s', def, new_col->>'storetype') end;
    end if;
    -- An identity column or a stored generated column added to a table with rows gives each existing row a value of its
    -- own too (the next value of its sequence, or its expression over the row), and the versions written before have
    -- none: refused for the same reason as a volatile default below.
    if computed is not null then
      if gnomon.table_has_rows(tt.relid) then
        raise exception using errcode = 'GN006',
          message = format('adding column %I %s to tracked table %s, which gives each existing row a value of its own, is not supported',
                           new_col->>'name', computed, tab),
          detail = 'Gnomon''s history has no version with those values, so reads as of earlier points would show them for '
                   || 'the rows unchanged since and NULL for the others.',
          hint = case when computed like '%identity'
                   then format('Add a plain column, fill it with an UPDATE (which is versioned), then make it an identity: '
                               || 'alter table %1$s add column %2$I %3$s; update %1$s set %2$I = ...; alter table %1$s alter column %2$I '
                               || 'set not null, alter column %2$I add %4$s (start with ...);', tab, new_col->>'name', new_col->>'type', computed)
                   else format('Add a plain column and fill it with an UPDATE (which is versioned), computing it in the writes from '
                               || 'then on; or untrack the table (select gnomon.untrack(%L)), add the column, and track it again.', tab) end;
      end if;
    end if;
    -- A default PostgreSQL cannot keep as one value for the existing rows (a volatile one such as random(), or one of a
    -- domain with constraints) rewrote the table, giving every existing row a value of its own. The history has no
    -- version holding those values, so reads as of earlier points would show them for rows unchanged since and NULL
    -- for the others: refused (the rows do not exist yet when the table is empty, so nothing mixes then).
    if filled is not null then
      if gnomon.table_has_rows(tt.relid) then
        raise exception using errcode = 'GN006',
          message = format('adding column %I to tracked table %s with the default %s, which gives each existing row a value of its own, is not supported',
                           new_col->>'name', tab, filled),
          detail = 'Gnomon''s history has no version with those values, so reads as of earlier points would show them for '
                   || 'the rows unchanged since and NULL for the others.',
          hint = format('Add the column without that default (or with a constant one), fill it with an UPDATE (which is '
                        || 'versioned), then set the default: alter table %1$s add column %2$I ...; update %1$s set %2$I = %3$s; '
                        || 'alter table %1$s alter column %2$I set default %3$s;', tab, new_col->>'name', filled);
      end if;
    end if;
    -- added with the default in one statement, so existing versions get it as a stored "missing" value
    execute format('alter table gnomon_t.%I add column %I %s%s%s', tt.history_table, new_col->>'name', new_col->>'storetype',
                   coalesce(' collate ' || (new_col->>'collation'), ''), coalesce(' default ' || def, ''));
    if def is not null then
      execute format('alter table gnomon_t.%I alter column %I drop default', tt.history_table, new_col->>'name');
    end if;
    execute format('alter table gnomon_t.%I add column %I %s%s%s', tt.checkpoint_table, new_col->>'name', new_col->>'storetype',
                   coalesce(' collate ' || (new_col->>'collation'), ''), coalesce(' default ' || def, ''));
    if def is not null then
      execute format('alter table gnomon_t.%I alter column %I drop default', tt.checkpoint_table, new_col->>'name');
    end if;
    -- the branch tables too (a branch row written before the column existed reads it as existing rows do)
    execute format('alter table gnomon_t.%I add column %I %s%s%s', gnomon.object_name(tt.base_name, '_b'), new_col->>'name',
                   new_col->>'storetype', coalesce(' collate ' || (new_col->>'collation'), ''), coalesce(' default ' || def, ''));
    execute format('alter table gnomon_t.%I add column %I %s%s', gnomon.object_name(tt.base_name, '_bh'), new_col->>'name',
                   new_col->>'storetype', coalesce(' collate ' || (new_col->>'collation'), ''));
    if def is not null then
      execute format('alter table gnomon_t.%I alter column %I drop default', gnomon.object_name(tt.base_name, '_b'), new_col->>'name');
    end if;
  end loop;
  update gnomon.tracked_table set columns = cur_cols where table_id = p_table_id;
  perform gnomon.install_objects(p_table_id);
  perform gnomon.install_branch_objects(p_table_id);
end $$;

-- gnomon.follow_table_change as the catalog's owner, for a role that may ALTER a tracked table (it owns it) but does
-- not own Gnomon's objects for it (the history, checkpoint and branch tables, the generated functions: whoever ran
-- gnomon.track owns them). It does what the catalog and the table's current definition say, nothing a caller
-- chooses: the table id only names which table to bring up to date, and with nothing changed it changes nothing.
create or replace function gnomon.follow_table_change_as_owner(p_table_id integer) returns void
language plpgsql security definer set search_path = pg_catalog, pg_temp as $$
begin
  perform gnomon.follow_table_change(p_table_id);
end $$;
comment on function gnomon.follow_table_change_as_owner(integer) is
  'Internal: gnomon.follow_table_change run as the catalog''s owner, when the role altering a tracked table does not own its history.';

-- ATTACH PARTITION and DETACH PARTITION on a tracked partitioned table (or on a partitioned table below it) add or
-- remove rows without versions: reads as of earlier points would show attached rows as if they had always been there,
-- and no longer show detached ones. PostgreSQL does not tell an event trigger which partition an ALTER TABLE moved, so
-- the partitions of every tracked partitioned table are noted when each ALTER TABLE starts
-- (gnomon.partition_guard_start, in the transaction-local setting gnomon.partitions_before) and compared when it ends
-- (gnomon.check_partition_moves, from gnomon.ddl_guard): a partition that moved holding rows is refused (GN006); an
-- empty one may come and go, and gets (or loses) the partitions' write triggers (gnomon.install_partition_triggers).
-- DETACH PARTITION ... CONCURRENTLY commits its first transaction before the command ends, in a second one where the
-- note is gone and the rows have already left the table: it is checked when it starts (gnomon.check_concurrent_detach),
-- and when it ends, as is DETACH PARTITION ... FINALIZE (gnomon.check_partitions_left). DROP TABLE of a partition is
-- checked by gnomon.drop_guard.
create or replace function gnomon.partitions_of_tracked() returns jsonb
language sql stable as $$
  select coalesce(jsonb_object_agg(t.table_id::text,
           (select coalesce(jsonb_agg(p.relid::oid::bigint order by p.relid), '[]') from pg_partition_tree(t.relid) p
             where p.relid <> t.relid)), '{}')
    from gnomon.tracked_table t join pg_class c on c.oid = t.relid
   where c.relkind = 'p'
$$;
comment on function gnomon.partitions_of_tracked() is
  'Per tracked partitioned table (by table_id), the oids of its partitions at every level: what the partition guard compares.';

-- Refuses (GN006) moving a partition that holds rows into or out of a tracked table (moved: 'attach', 'detach', 'drop',
-- or 'pending' for one a DETACH ... CONCURRENTLY leaves pending);
-- an empty one passes. The one wording of the refusal, for gnomon.check_partition_moves, check_concurrent_detach
-- and drop_guard.
create or replace function gnomon.check_partition_move(part text, tab text, moved text, has_rows boolean default null)
returns void
language plpgsql as $$
begin
  if not coalesce(has_rows, gnomon.table_has_rows(part::regclass)) then
    return;
  end if;
  if moved = 'attach' then
    raise exception using errcode = 'GN006',
      message = format('attaching partition %s, which holds rows, to tracked table %s is not supported', part, tab),
      detail = 'Its rows have no versions: reads as of earlier points would show them as if they had always been there.',
      hint = format('Attach it empty and move the rows in through the table (insert into %s select * from ...), which is '
                    || 'versioned; or untrack the table around the change.', tab);
  elsif moved = 'drop' then
    raise exception using errcode = 'GN006',
      message = format('dropping partition %s, which holds rows, of tracked table %s is not supported', part, tab),
      detail = 'Its rows would leave without versions: reads as of earlier points would no longer show them.',
      hint = format('Delete its rows through the table (delete from %s where ...), which is versioned, then drop the '
                    || 'empty partition; or untrack the table around the change.', tab);
  elsif moved = 'pending' then
    raise exception using errcode = 'GN006',
      message = format('detaching partition %s, which holds rows, from tracked table %s is not supported', part, tab),
      detail = 'A DETACH PARTITION ... CONCURRENTLY left it pending: reads of the table no longer see its rows, and they '
               || 'have no delete versions, so reads as of earlier points would lose them too. It stays pending while it holds rows.',
      hint = format('Copy the rows elsewhere if you keep them, delete them from the partition itself (delete from %1$s), '
                    || 'which is versioned, then complete the detach: the same ALTER TABLE with FINALIZE in place of '
                    || 'CONCURRENTLY (alter table ... detach partition %1$s finalize;).', part);
  else
    raise exception using errcode = 'GN006',
      message = format('detaching partition %s, which holds rows, from tracked table %s is not supported', part, tab),
      detail = 'Its rows would leave without versions: reads as of earlier points would no longer show them.',
      hint = format('Copy the rows elsewhere if you keep them, delete them through the table (delete from %s where ...), '
                    || 'which is versioned, then detach the empty partition; or untrack the table around the change.', tab);
  end if;
end $$;
comment on function gnomon.check_partition_move(text, text, text, boolean) is
  'Refuses (GN006) attaching, detaching or dropping a partition that holds rows of a tracked table; an empty one passes.';

-- A possibly schema-qualified, possibly quoted name, as a regular expression without groups: for the guards that read
-- a statement's text (gnomon.check_concurrent_detach, gnomon.lock_dropped_partitions).
create or replace function gnomon.qualified_name_pattern() returns text
language sql immutable as $$
  select '(?:"(?:[^"]|"")+"|[^\s".;,]+)(?:\s*\.\s*(?:"(?:[^"]|"")+"|[^\s".;,]+))?'
$$;
comment on function gnomon.qualified_name_pattern() is
  'Internal: the regular expression of a table name as a statement spells it, for the DDL guards that read current_query().';

-- ALTER TABLE ... DETACH PARTITION ... CONCURRENTLY, checked when it starts (gnomon.partition_guard_start): its first
-- transaction commits the partition as leaving, and the command ends in a second one, too late to refuse. PostgreSQL
-- does not tell a ddl_command_start trigger which partition a command names, so the statement's text is read: it
-- cannot run in a transaction block, so it is the whole of current_query(). A text this does not read (a comment in
-- it, say) while tracked partitioned tables exist is refused rather than passed blind.
create or replace function gnomon.check_concurrent_detach(q text) returns void
language plpgsql as $$
declare
  qname text := gnomon.qualified_name_pattern();
  m text[];
  part regclass;
  root regclass;
begin
  -- (a text over 10,000 characters is not searched: it is a script of several statements, where the command cannot
  -- run and refuses itself, and searching it on each of its ALTER TABLEs would cost its length each time; a single
  -- DETACH ... CONCURRENTLY padded that long by a comment passes here, and is refused when it ends, its partition left
  -- pending: gnomon.check_partitions_left)
  if not exists (select from gnomon.tracked_table t join pg_class c on c.oid = t.relid where c.relkind = 'p')
     or length(q) > 10000 or q !~* '\mdetach\s+partition\M.*\mconcurrently\M' then
    return;
  end if;
  m := regexp_match(q, '^\s*alter\s+table\s+(?:if\s+exists\s+)?(?:only\s+)?' || qname || '\s+detach\s+partition\s+('
                       || qname || ')\s+concurrently\s*;?\s*$', 'i');
  if m is null then
    raise exception using errcode = 'GN006',
      message = 'Gnomon cannot tell which partition this DETACH PARTITION ... CONCURRENTLY detaches',
      detail = 'Tracked partitioned tables exist, and a partition that leaves one of them holding rows would take its rows '
               || 'without versions; the check reads the statement''s text, and this text has another form.',
      hint = 'Write it as one statement without comments: alter table <table> detach partition <partition> concurrently;';
  end if;
  part := to_regclass(m[1]);
  root := pg_partition_root(part);
  if root is null or not exists (select from gnomon.tracked_table t where t.relid = root) then
    return;
  end if;
  -- (rows written to it after this check, until the detach has waited for every transaction that still sees it in the
  -- table, are found when the detach ends: gnomon.check_partitions_left)
  perform gnomon.check_partition_move(part::text, (select format('%I.%I', t.schema_name, t.table_name) from gnomon.tracked_table t
                                              where t.relid = root), 'detach');
end $$;
comment on function gnomon.check_concurrent_detach(text) is
  'Refuses (GN006) a DETACH PARTITION ... CONCURRENTLY of a partition holding rows of a tracked table, when it starts.';

create or replace function gnomon.partition_guard_start() returns event_trigger
language plpgsql as $$
begin
  perform set_config('gnomon.partitions_before', gnomon.partitions_of_tracked()::text, true);
  perform gnomon.check_concurrent_detach(current_query());
end $$;
comment on function gnomon.partition_guard_start() is
  'Event trigger function (ddl_command_start, ALTER TABLE): notes the partitions of the tracked partitioned tables for gnomon.check_partition_moves.';

create or replace function gnomon.check_partition_moves() returns void
language plpgsql as $$
declare
  before jsonb := nullif(current_setting('gnomon.partitions_before', true), '')::jsonb;
  after jsonb;
  m record;
begin
  if before is null or before = '{}'::jsonb then
    return;
  end if;
  after := gnomon.partitions_of_tracked();
  perform set_config('gnomon.partitions_before', after::text, true);
  if after = before then
    return;
  end if;
  for m in
    select format('%I.%I', t.schema_name, t.table_name) as tab, x.part::oid as part, x.moved
      from gnomon.tracked_table t
      cross join lateral (
        select a.v::bigint as part, 'attach' as moved
          from jsonb_array_elements_text(coalesce(after -> t.table_id::text, '[]')) a(v)
         where not (before -> t.table_id::text) @> to_jsonb(a.v::bigint)
        union all
        select b.v::bigint, 'detach'
          from jsonb_array_elements_text(before -> t.table_id::text) b(v)
         where not coalesce(after -> t.table_id::text, '[]') @> to_jsonb(b.v::bigint)) x
     where before ? t.table_id::text
       and exists (select from pg_class c where c.oid = x.part::oid and c.relkind = 'r')
  loop
    perform gnomon.check_partition_move(m.part::regclass::text, m.tab, m.moved);
  end loop;
  -- the partitions that came get the write triggers, the ones that left lose them
  perform gnomon.install_partition_triggers(t.table_id) from gnomon.tracked_table t
   where before ? t.table_id::text and (before -> t.table_id::text) is distinct from (after -> t.table_id::text);
end $$;
comment on function gnomon.check_partition_moves() is
  'Refuses (GN006) an ALTER TABLE that attached a partition holding rows to a tracked partitioned table, or detached one holding rows from it.';

-- DETACH PARTITION ... CONCURRENTLY ends in a second transaction, where gnomon.partitions_before is gone, and
-- DETACH PARTITION ... FINALIZE completes one that was interrupted after its first (the partition pending all the
-- while, outside pg_partition_tree): neither is seen by gnomon.check_partition_moves. The tables that still carry a
-- tracked table's write triggers though they are neither its partitions nor pending ones (gnomon.detach_pending_partitions
-- keeps those) are the ones such a detach took: one holding rows is refused (GN006), which leaves it pending (a
-- concurrent detach's first transaction has committed); an empty one loses the triggers. A partition detached before
-- the table was tracked never had them, and completes as before. Called by gnomon.ddl_guard for ALTER TABLEs that
-- detach a partition.
create or replace function gnomon.check_partitions_left(p_table_id integer) returns void
language plpgsql as $$
declare
  tt gnomon.tracked_table;
  rel regclass;
begin
  select * into tt from gnomon.tracked_table where table_id = p_table_id;
  for rel in select distinct g.tgrelid::regclass from pg_trigger g join pg_class c on c.oid = g.tgrelid and c.relkind = 'r'
              where g.tgfoid = to_regprocedure(format('gnomon_t.%I()', tt.trigger_function)) and g.tgparentid = 0
                and g.tgrelid <> tt.relid and g.tgname = any (gnomon.write_trigger_names(true))
                and g.tgrelid not in (select p.relid from pg_partition_tree(tt.relid) p)
                and g.tgrelid not in (select gnomon.detach_pending_partitions(tt.relid))
              order by 1 loop
    perform gnomon.check_partition_move(rel::text, format('%I.%I', tt.schema_name, tt.table_name), 'pending');
  end loop;
  perform gnomon.install_partition_triggers(p_table_id);
end $$;
comment on function gnomon.check_partitions_left(integer) is
  'Refuses (GN006) completing a DETACH PARTITION ... CONCURRENTLY (its end, or ... FINALIZE) of a partition holding rows of a tracked table; drops an empty one''s write triggers.';

-- Refuses (GN006) a tracked table, or one of its partitions, that a DDL command made unlogged (gnomon.unlogged_part
-- says why); for the DDL guard, on ALTER TABLE ... SET UNLOGGED and CREATE UNLOGGED TABLE ... PARTITION OF.
create or replace function gnomon.check_logged(p_table_id integer) returns void
language plpgsql as $$
declare
  tt gnomon.tracked_table;
  u regclass;
begin
  select * into tt from gnomon.tracked_table where table_id = p_table_id;
  u := gnomon.unlogged_part(tt.relid);
  if u is not null then
    raise exception using errcode = 'GN006',
      message = format('an unlogged %s is not supported while %I.%I is tracked', u, tt.schema_name, tt.table_name),
      detail = 'PostgreSQL empties an unlogged table after a crash without a version, and reads as of earlier points read '
               || 'the rows unchanged since from the table itself: they would lose those rows too (a standby has none).',
      hint = format('Keep it logged; or untrack the table first: select gnomon.untrack(%L);', format('%I.%I', tt.schema_name, tt.table_name));
  end if;
end $$;
comment on function gnomon.check_logged(integer) is
  'Refuses (GN006) a tracked table with an unlogged table among itself and its partitions.';

create or replace function gnomon.ddl_guard() returns event_trigger
language plpgsql as $$
declare
  cmd record;
  tid integer;
  disabled text;
begin
  perform gnomon.check_partition_moves();
  perform gnomon.check_no_inheritance(array(select d.objid from pg_event_trigger_ddl_commands() d
                                             where d.classid = 'pg_class'::regclass));
  -- the end of a DETACH PARTITION ... CONCURRENTLY, or its FINALIZE, at any level of a tracked table
  if current_query() ~* '\mdetach\s+partition\M' then
    perform gnomon.check_partitions_left(t.table_id)
       from gnomon.tracked_table t
      where t.relid in (select coalesce(pg_partition_root(d.objid), d.objid) from pg_event_trigger_ddl_commands() d
                         where d.classid = 'pg_class'::regclass);
  end if;
  -- SET UNLOGGED of the table or of one of its partitions
  perform gnomon.check_logged(t.table_id)
     from gnomon.tracked_table t
    where t.relid in (select coalesce(pg_partition_root(d.objid), d.objid) from pg_event_trigger_ddl_commands() d
                       where d.classid = 'pg_class'::regclass);
  for cmd in select * from pg_event_trigger_ddl_commands() where classid = 'pg_class'::regclass loop
    select table_id into tid from gnomon.tracked_table where relid = cmd.objid;
    if found then
      -- a partition detached concurrently ends here with no note of it (gnomon.check_partition_moves): its write
      -- triggers go
      perform gnomon.install_partition_triggers(tid);
      -- as the role running the ALTER when it owns the table's history (as when it tracked the table), else as the
      -- catalog's owner
      if pg_has_role(current_user, (select c.relowner from gnomon.tracked_table t join pg_class c
                                      on c.oid = format('gnomon_t.%I', t.history_table)::regclass
                                     where t.table_id = tid), 'USAGE') then
        perform gnomon.follow_table_change(tid);
      else
        perform gnomon.follow_table_change_as_owner(tid);
      end if;
      -- row-level security switched on or off, or a new owner: the history's readers follow
      perform gnomon.sync_privileges_of(tid);
      -- not refused, since pg_restore --disable-triggers does it for the length of a restore; said out loud
      disabled := gnomon.disabled_write_triggers(cmd.objid);
      if disabled is not null then
        raise warning 'writes to tracked table % now leave no history: its Gnomon write triggers are disabled', disabled
          using hint = 'Enable them again (alter table ... enable trigger ...); until then gnomon.check_triggers() and Gnomon.open refuse with GN072.';
      end if;
    end if;
  end loop;
end $$;

-- Refuses (GN006) an inheritance child of a tracked (non-partitioned) table, made by CREATE TABLE ... INHERITS or
-- ALTER TABLE ... INHERIT: reads of the table, and its as-of reads of every earlier point (which take the rows
-- unchanged since from the table itself), include the child's rows, which have no versions (a write naming the child
-- fires none of the table's triggers). gnomon.track refuses a table that has them (GN004). Checks the tables a DDL
-- command made or altered (rels: its pg_event_trigger_ddl_commands()), so a child made before the guard existed does
-- not stop unrelated commands.
create or replace function gnomon.check_no_inheritance(rels oid[]) returns void
language plpgsql as $$
declare
  bad record;
begin
  select i.inhrelid::regclass as child, format('%I.%I', t.schema_name, t.table_name) as tab into bad
    from gnomon.tracked_table t join pg_class c on c.oid = t.relid and c.relkind = 'r'
    join pg_inherits i on i.inhparent = t.relid
   where i.inhrelid = any (rels)
   limit 1;
  if found then
    raise exception using errcode = 'GN006',
      message = format('making %s an inheritance child of tracked table %s is not supported', bad.child, bad.tab),
      detail = 'Reads of the table include the rows of its inheritance children, and a write naming a child fires none of '
               || 'the table''s triggers: those rows would have no versions, and reads as of earlier points would show them '
               || 'as if they had always been there.',
      hint = format('Keep the tables apart (track %s on its own), or make %s a partitioned table; or untrack %s first.',
                    bad.child, bad.tab, bad.tab);
  end if;
end $$;
comment on function gnomon.check_no_inheritance(oid[]) is
  'Refuses (GN006) an inheritance child of a tracked table (CREATE TABLE ... INHERITS, ALTER TABLE ... INHERIT).';

-- CREATE TABLE ... PARTITION OF a tracked table (at any level): the new partition gets the partitions' write triggers
-- (gnomon.install_partition_triggers), and may not be unlogged (gnomon.check_logged). CREATE TABLE ... INHERITS a
-- tracked table is refused (gnomon.check_no_inheritance).
create or replace function gnomon.partition_create_guard() returns event_trigger
language plpgsql as $$
declare
  tid integer;
begin
  perform gnomon.check_no_inheritance(array(select d.objid from pg_event_trigger_ddl_commands() d
                                             where d.classid = 'pg_class'::regclass));
  for tid in select distinct t.table_id from pg_event_trigger_ddl_commands() d
               join gnomon.tracked_table t on t.relid = pg_partition_root(d.objid)
              where d.classid = 'pg_class'::regclass and d.objid <> t.relid loop
    perform gnomon.check_logged(tid);
    perform gnomon.install_partition_triggers(tid);
  end loop;
end $$;
comment on function gnomon.partition_create_guard() is
  'Event trigger function (ddl_command_end, CREATE TABLE): gives a new partition of a tracked table its write triggers; refuses an unlogged one, and an inheritance child of a tracked table (GN006).';

-- A row written to a partition between gnomon.drop_guard_start's read and the DROP's lock would leave with it unversioned
-- (the DROP waits for the writer, then drops what it committed). So the partitions of tracked tables that a DROP TABLE
-- names are locked first, as the DROP itself will lock them (ACCESS EXCLUSIVE, the parent before the partition and the
-- partition before those below it, so no new deadlock), and read after: a writer that came first has committed or
-- rolled back by then, one that comes later waits for the DROP. PostgreSQL does not tell a ddl_command_start trigger
-- what a command names, so the statement's text is read: a DROP TABLE sent as a statement of its own. Other forms
-- (DROP SCHEMA ... CASCADE, DROP OWNED, a DROP TABLE in a string of several statements or run by a function) are read
-- without that lock, with the window open: lock the partition first (lock table <partition> in access exclusive mode)
-- in the same transaction to close it. In REPEATABLE READ and SERIALIZABLE the read sees the transaction's snapshot,
-- taken when the DROP started, before the lock: there the window stays open unless the LOCK runs before any statement
-- that takes the snapshot.
create or replace function gnomon.lock_dropped_partitions(q text) returns void
language plpgsql as $$
declare
  qname text := gnomon.qualified_name_pattern();
  m text[];
  n text[];
  rel regclass;
begin
  if length(q) > 10000 or q !~* '^\s*drop\s+table\M'
     or not exists (select from gnomon.tracked_table t join pg_class c on c.oid = t.relid where c.relkind = 'p') then
    return;
  end if;
  m := regexp_match(q, '^\s*drop\s+table\s+(?:if\s+exists\s+)?(' || qname || '(?:\s*,\s*' || qname
                       || ')*)\s*(?:cascade|restrict)?\s*;?\s*$', 'i');
  if m is null then
    return;
  end if;
  for n in select regexp_matches(m[1], qname, 'g') loop
    rel := to_regclass(n[1]);
    if rel is null or pg_partition_root(rel) = rel
       or not exists (select from gnomon.tracked_table t where t.relid = pg_partition_root(rel)) then
      continue;
    end if;
    begin
      execute format('lock table only %s in access exclusive mode', (select i.inhparent::regclass from pg_inherits i where i.inhrelid = rel));
      execute format('lock table %s in access exclusive mode', rel);
    exception when insufficient_privilege then
      null;  -- the DROP decides whether this role may drop it; the read below then runs without the lock
    end;
  end loop;
end $$;
comment on function gnomon.lock_dropped_partitions(text) is
  'Internal: locks the partitions of tracked tables a DROP TABLE statement names, as the DROP will, before gnomon.drop_guard_start reads whether they hold rows.';

-- DROP TABLE of a partition holding rows takes them out of the tracked table without a version, like an unrecorded
-- TRUNCATE. When sql_drop fires the partition is gone and cannot be read, so the leaf partitions of the tracked
-- tables that hold rows are noted when each DROP starts (in the transaction-local setting gnomon.partitions_with_rows,
-- as {oid: tracked table}); gnomon.drop_guard refuses dropping one of them (GN006). This reads the first row of each
-- leaf partition of the tracked partitioned tables on every DROP TABLE, DROP SCHEMA and DROP OWNED in the database
-- (nothing when there is no tracked partitioned table).
create or replace function gnomon.drop_guard_start() returns event_trigger
language plpgsql as $$
begin
  perform gnomon.lock_dropped_partitions(current_query());
  perform set_config('gnomon.partitions_with_rows',
    (select coalesce(jsonb_object_agg(p.relid::oid::text, format('%I.%I', t.schema_name, t.table_name)), '{}')::text
       from gnomon.tracked_table t join pg_class r on r.oid = t.relid and r.relkind = 'p'
      cross join lateral pg_partition_tree(t.relid) p
       join pg_class c on c.oid = p.relid and c.relkind = 'r'
      where gnomon.table_has_rows(p.relid)), true);
end $$;
comment on function gnomon.drop_guard_start() is
  'Event trigger function (ddl_command_start, DROP TABLE, DROP SCHEMA, DROP OWNED): notes the partitions of tracked tables that hold rows, for gnomon.drop_guard.';

create or replace function gnomon.drop_guard() returns event_trigger
language plpgsql as $$
declare
  obj record;
  tt gnomon.tracked_table;
  -- (noted by gnomon.drop_guard_start for the three commands that drop tables only)
  with_rows jsonb := case when tg_tag in ('DROP TABLE', 'DROP SCHEMA', 'DROP OWNED')
                          then coalesce(nullif(current_setting('gnomon.partitions_with_rows', true), '')::jsonb, '{}')
                          else '{}' end;
begin
  for obj in select * from pg_event_trigger_dropped_objects() where classid = 'pg_class'::regclass and objsubid = 0 loop
    select * into tt from gnomon.tracked_table where relid = obj.objid;
    if found then
      raise exception using errcode = 'GN006',
        message = format('dropping tracked table %I.%I is not supported while it is tracked', tt.schema_name, tt.table_name),
        hint = format('Untrack it first: select gnomon.untrack(%L, drop_history => true);', format('%I.%I', tt.schema_name, tt.table_name));
    end if;
  end loop;
  -- a column of a tracked table dropped with an object it depends on (DROP TYPE, DOMAIN, COLLATION, FUNCTION,
  -- EXTENSION ... CASCADE; ALTER TYPE ... DROP ATTRIBUTE CASCADE of a typed table): the cascade takes the history's
  -- column and generated objects too, and every later write fails. ALTER TABLE ... DROP COLUMN is refused by
  -- gnomon.follow_table_change, with its own advice.
  if tg_tag <> 'ALTER TABLE' then
    for obj in select d.objid, d.objsubid from pg_event_trigger_dropped_objects() d
                where d.classid = 'pg_class'::regclass and d.objsubid > 0 loop
      select * into tt from gnomon.tracked_table where relid = obj.objid;
      if found then
        raise exception using errcode = 'GN006',
          message = format('dropping column %I of tracked table %I.%I is not supported',
                           (select c->>'name' from jsonb_array_elements(tt.columns) c where (c->>'attnum')::int = obj.objsubid),
                           tt.schema_name, tt.table_name),
          detail = format('%s drops it with an object it depends on (CASCADE), and with it the column of the table''s history '
                          || 'and the generated objects that read it.', tg_tag),
          hint = format('Keep the object (dropped without CASCADE, PostgreSQL lists what depends on it); to drop the column, '
                        || 'untrack the table first: select gnomon.untrack(%L);', format('%I.%I', tt.schema_name, tt.table_name));
      end if;
    end loop;
  end if;
  for obj in select * from pg_event_trigger_dropped_objects() where classid = 'pg_class'::regclass and objsubid = 0
                and with_rows ? objid::text loop
    perform gnomon.check_partition_move(obj.object_identity, with_rows ->> obj.objid::text, 'drop', true);
  end loop;
end $$;

-- ALTER SCHEMA ... RENAME of a schema that holds tracked tables: the generated functions, the branch schema and the
-- catalog name the tables by their schema, so it is refused like renaming a table (GN006).
create or replace function gnomon.schema_guard() returns event_trigger
language plpgsql as $$
declare
  moved record;
begin
  select tt.schema_name, n.nspname as now_name,
         string_agg(format('%I.%I', tt.schema_name, tt.table_name), ', ' order by tt.table_name) as tables
    into moved
    from gnomon.tracked_table tt join pg_class c on c.oid = tt.relid join pg_namespace n on n.oid = c.relnamespace
   where n.nspname <> tt.schema_name
   group by 1, 2
   limit 1;
  if moved.schema_name is not null then
    raise exception using errcode = 'GN006',
      message = format('renaming schema %I (to %I) is not supported while it holds tracked tables: %s',
                       moved.schema_name, moved.now_name, moved.tables),
      hint = 'Untrack them first (select gnomon.untrack(...) for each), rename the schema, then track them again.';
  end if;
end $$;

-- GRANT and REVOKE on a tracked table reach its generated objects (gnomon.sync_privileges_of). PostgreSQL does not
-- tell an event trigger which objects a GRANT named, so every tracked table is compared (a few catalog reads each).
-- A failure here must not undo the user's GRANT: it becomes a warning saying how to finish by hand.
create or replace function gnomon.privilege_guard() returns event_trigger
language plpgsql as $$
declare
  t integer;
begin
  -- our own grants, and grants on anything but tables (schemas, functions, sequences), change nothing here
  if coalesce(current_setting('gnomon.syncing_privileges', true), '') = 'on'
     or not exists (select 1 from pg_event_trigger_ddl_commands() where object_type = 'TABLE') then
    return;
  end if;
  for t in select table_id from gnomon.tracked_table order by table_id loop
    begin
      perform gnomon.sync_privileges_of(t);
    exception when others then
      raise warning 'the privileges of tracked table % did not reach its history and branch objects: %',
        (select format('%I.%I', schema_name, table_name) from gnomon.tracked_table where table_id = t), sqlerrm
        using hint = 'Run select gnomon.sync_privileges(); as a superuser or the owner of the gnomon_t tables.';
    end;
  end loop;
end $$;

-- CREATE TRIGGER and DROP TRIGGER: a tracked table's key-change row trigger fires only for UPDATEs that assign a key
-- column unless the table has a row-level BEFORE UPDATE trigger, which could change a key the statement does not name
-- (gnomon.key_change_trigger_ddl). When such a trigger comes or goes, the key-change trigger takes the other form, in
-- the same transaction: gnomon.trigger_guard after CREATE TRIGGER (ddl_command_end, which names the new triggers),
-- gnomon.trigger_drop_guard after DROP TRIGGER (sql_drop, which names the dropped ones' tables).
-- (the tracked tables among relids, each refreshed as the catalog's owner)
create or replace function gnomon.refresh_key_change_triggers(p_relids oid[]) returns void
language plpgsql as $$
declare
  tid integer;
begin
  for tid in select t.table_id from gnomon.tracked_table t where t.relid = any (p_relids) order by t.table_id loop
    perform gnomon.refresh_key_change_trigger(tid);
  end loop;
end $$;
comment on function gnomon.refresh_key_change_triggers(oid[]) is
  'Internal: gnomon.refresh_key_change_trigger for each tracked table among the relations given.';

create or replace function gnomon.trigger_guard() returns event_trigger
language plpgsql as $$
begin
  perform gnomon.refresh_key_change_triggers(array(
    select g.tgrelid from pg_event_trigger_ddl_commands() d join pg_catalog.pg_trigger g on g.oid = d.objid
     where d.classid = 'pg_catalog.pg_trigger'::regclass));
end $$;
comment on function gnomon.trigger_guard() is
  'Event trigger function (ddl_command_end, CREATE TRIGGER): gives a tracked table''s key-change row trigger the form its BEFORE UPDATE row triggers call for.';

create or replace function gnomon.trigger_drop_guard() returns event_trigger
language plpgsql as $$
begin
  -- a dropped trigger's address is (schema, table, trigger)
  perform gnomon.refresh_key_change_triggers(array(
    select pg_catalog.to_regclass(pg_catalog.format('%I.%I', o.address_names[1], o.address_names[2]))::oid
      from pg_event_trigger_dropped_objects() o where o.object_type = 'trigger'));
end $$;
comment on function gnomon.trigger_drop_guard() is
  'Event trigger function (sql_drop, DROP TRIGGER): gives a tracked table''s key-change row trigger the form its remaining BEFORE UPDATE row triggers call for.';

drop event trigger if exists gnomon_ddl_guard;
create event trigger gnomon_ddl_guard on ddl_command_end when tag in ('ALTER TABLE')
  execute function gnomon.ddl_guard();
drop event trigger if exists gnomon_partition_guard;
create event trigger gnomon_partition_guard on ddl_command_start when tag in ('ALTER TABLE')
  execute function gnomon.partition_guard_start();
drop event trigger if exists gnomon_partition_create_guard;
create event trigger gnomon_partition_create_guard on ddl_command_end when tag in ('CREATE TABLE')
  execute function gnomon.partition_create_guard();
drop event trigger if exists gnomon_drop_guard_start;
create event trigger gnomon_drop_guard_start on ddl_command_start when tag in ('DROP TABLE', 'DROP SCHEMA', 'DROP OWNED')
  execute function gnomon.drop_guard_start();
drop event trigger if exists gnomon_drop_guard;
-- every command that drops (a column of a tracked table goes with a type, domain, collation, function or extension
-- dropped with CASCADE); the partitions' rows are noted only for the three that drop tables (gnomon_drop_guard_start)
create event trigger gnomon_drop_guard on sql_drop
  execute function gnomon.drop_guard();
drop event trigger if exists gnomon_privilege_guard;
create event trigger gnomon_privilege_guard on ddl_command_end when tag in ('GRANT', 'REVOKE')
  execute function gnomon.privilege_guard();
drop event trigger if exists gnomon_trigger_guard;
create event trigger gnomon_trigger_guard on ddl_command_end when tag in ('CREATE TRIGGER')
  execute function gnomon.trigger_guard();
drop event trigger if exists gnomon_trigger_drop_guard;
create event trigger gnomon_trigger_drop_guard on sql_drop when tag in ('DROP TRIGGER')
  execute function gnomon.trigger_drop_guard();
drop event trigger if exists gnomon_schema_guard;
create event trigger gnomon_schema_guard on ddl_command_end when tag in ('ALTER SCHEMA')
  execute function gnomon.schema_guard();

-- Partitioned tables tracked before their partitions had write triggers of their own get them now, after their
-- trigger function is regenerated (in that order: the earlier function's TRUNCATE copied every row of the table, and
-- fired on each partition as well it would have recorded each row once per partition more).
do $$
declare
  t integer;
begin
  for t in select tt.table_id from gnomon.tracked_table tt join pg_class c on c.oid = tt.relid
            where c.relkind = 'p' order by tt.table_id loop
    perform gnomon.install_objects(t);
    perform gnomon.install_partition_triggers(t);
  end loop;
end $$;
