-- The installer: the one author of every per-table object (history, checkpoint table, triggers, as-of functions).

-- Names of generated objects: base || suffix, shortened with a hash so it never exceeds 63 bytes.
create or replace function gnomon.object_name(base text, suffix text) returns name
language plpgsql immutable strict as $$
declare
  b text := base;
begin
  if octet_length(base || suffix) <= 63 then
    return (base || suffix)::name;
  end if;
  if octet_length(suffix) > 63 - 9 then
    raise exception using errcode = 'GN021', message = format('suffix %L is too long for a 63-byte name', suffix),
      hint = 'Generated names take suffixes of a few characters; this is a bug in the caller.';
  end if;
  -- leave room for '_' and an 8-character hash; cut whole characters, never half a multibyte one
  while octet_length(b || suffix) > 63 - 9 loop
    b := left(b, -1);
  end loop;
  return (b || '_' || left(md5(base), 8) || suffix)::name;
end $$;
comment on function gnomon.object_name(text, text) is 'The name of a generated object: base || suffix, shortened with a hash to fit 63 bytes.';

-- A history's open partition: the one whose range runs to MAXVALUE, where new versions go (gnomon.roll_history
-- closes it and opens the next); null when the history has none.
create or replace function gnomon.open_history_partition(history regclass) returns regclass
language sql stable as $$
  select c.oid::regclass from pg_inherits i join pg_class c on c.oid = i.inhrelid
   where i.inhparent = history and pg_get_expr(c.relpartbound, c.oid) like '%TO (MAXVALUE)'
$$;
comment on function gnomon.open_history_partition(regclass) is 'Internal: a history table''s open partition (its range runs to MAXVALUE), or null.';

-- Whether Gnomon can compare values of a type (diffs and merges compare row images).
create or replace function gnomon.type_has_equality(t oid) returns boolean
language plpgsql stable strict as $$
declare
  ty pg_type;
begin
  select * into ty from pg_type where oid = t;
  if ty.typtype = 'd' then return gnomon.type_has_equality(ty.typbasetype); end if;
  if ty.typelem <> 0 and ty.typsubscript = 'array_subscript_handler'::regproc then
    return gnomon.type_has_equality(ty.typelem);
  end if;
  if ty.typtype in ('e', 'r', 'm') then return true; end if;
  -- a composite compares by its parts
  if ty.typtype = 'c' then
    return not exists (select 1 from pg_attribute a where a.attrelid = ty.typrelid and a.attnum > 0 and not a.attisdropped
                          and not gnomon.type_has_equality(a.atttypid));
  end if;
  -- the type's own operator class, or one of a type it is binary-coercible to (varchar uses text's, cidr inet's)
  return exists (select 1 from pg_opclass c join pg_am a on a.oid = c.opcmethod
                  where c.opcdefault and a.amname in ('btree', 'hash')
                    and (c.opcintype = t or exists (select 1 from pg_cast k where k.castsource = t and k.casttarget = c.opcintype
                                                                            and k.castmethod = 'b' and k.castcontext = 'i')));
end $$;

-- The columns of a table as Gnomon stores them: history columns use a domain's base type
-- (an insert's version leaves non-key columns NULL, which a NOT NULL domain would refuse).
create or replace function gnomon.table_columns(relid oid) returns jsonb
language sql stable strict as $$
  with recursive base(attnum, typid, typmod) as (
      select a.attnum, a.atttypid, a.atttypmod from pg_attribute a
       where a.attrelid = relid and a.attnum > 0 and not a.attisdropped
    union all
      select b.attnum, t.typbasetype, t.typtypmod from base b join pg_type t on t.oid = b.typid
       where t.typtype = 'd'
  )
  select coalesce(jsonb_agg(jsonb_build_object(
           'name', a.attname,
           'attnum', a.attnum,
           'typid', a.atttypid,
           'type', format_type(a.atttypid, a.atttypmod),
           'storetype', format_type(b.typid, b.typmod),
           'collation', case when a.attcollation <> 0 and a.attcollation <> t.typcollation
                             then (select format('%I.%I', n.nspname, c.collname) from pg_collation c
                                     join pg_namespace n on n.oid = c.collnamespace where c.oid = a.attcollation) end
         ) order by a.attnum), '[]'::jsonb)
    from pg_attribute a
    join pg_type t on t.oid = a.atttypid
    join base b on b.attnum = a.attnum
                and not exists (select 1 from pg_type bt where bt.oid = b.typid and bt.typtype = 'd')
   where a.attrelid = relid and a.attnum > 0 and not a.attisdropped
$$;

-- Finds a tracked table by name; GN007 when no such table exists, GN001 when it is not tracked.
-- A table name as the functions taking one resolve it, the one definition: like regclass, GN021 for a null or
-- empty name, GN007 for a name that is malformed or names nothing. While a branch is selected an unqualified name
-- finds the branch view first (gnomon_b_<schema>.<table>, in front of search_path): it stands for its table.
create or replace function gnomon.resolve_table(table_name text) returns oid
language plpgsql stable as $$
declare
  rel oid;
  hint text := 'Name the table as schema.table; quote mixed-case names: ''"MySchema"."MyTable"''.';
begin
  if table_name is null or trim(table_name) = '' then
    raise exception using errcode = 'GN021', message = 'the table name is null or empty', hint = hint;
  end if;
  begin
    rel := to_regclass(table_name);
  exception when invalid_name or syntax_error or invalid_parameter_value then
    raise exception using errcode = 'GN007', message = format('%s is not a valid table name: %s', table_name, sqlerrm), hint = hint;
  end;
  if rel is null then
    raise exception using errcode = 'GN007', message = format('table %s does not exist', table_name), hint = hint;
  end if;
  return coalesce((select t.relid
                     from pg_class v join pg_namespace n on n.oid = v.relnamespace
                     join gnomon.tracked_table t on n.nspname = gnomon.branch_schema(t.schema_name) and v.relname = t.table_name
                    where v.oid = rel and v.relkind = 'v'), rel);
end $$;
comment on function gnomon.resolve_table(text) is
  'Internal: the oid of a table named as text (GN021 when null or empty, GN007 when malformed or missing); a branch view stands for its table.';

create or replace function gnomon.tracked(table_name text) returns gnomon.tracked_table
language plpgsql stable as $$
declare
  rel oid := gnomon.resolve_table(table_name);
  tt gnomon.tracked_table;
begin
  select * into tt from gnomon.tracked_table t where t.relid = rel;
  if not found then
    raise exception using errcode = 'GN001', message = format('table %s is not tracked', rel::regclass),
      hint = format('Track it first: select gnomon.track(%L);', rel::regclass::text);
  end if;
  return tt;
end $$;
comment on function gnomon.tracked(text) is 'The catalog row of a tracked table (GN007 when it does not exist, GN001 when it is not tracked).';

-- (Re)creates the trigger functions and the as-of functions of a tracked table from its catalog row.
create or replace function gnomon.install_objects(p_table_id integer) returns void
language plpgsql as $$
begin
  perform gnomon.install_write_function(p_table_id);
  perform gnomon.install_as_of(p_table_id);
  perform gnomon.install_changes(p_table_id);
end $$;
comment on function gnomon.install_objects(integer) is
  'Internal: (re)creates a tracked table''s write trigger functions, its as-of functions and its change-feed sources.';

-- The version key every history row takes unless its writer gives one (the C module and merges do): the history
-- table's column default, so that the trigger function's INSERT ... SELECT names no volatile function. (A SELECT
-- with nextval() in its list is not flattened into the INSERT: each statement then started and ran a subquery scan
-- above the transition table's, a tenth of a tracked single-row UPDATE's work.) Set by gnomon.track, and by this
-- file's last step on histories made before.
create or replace function gnomon.version_key_default() returns text
language sql immutable as $$ select 'pg_catalog.nextval(''gnomon.version_seq''::pg_catalog.regclass)' $$;
comment on function gnomon.version_key_default() is
  'Internal: the default expression of every history table''s g_vid column (the next value of gnomon.version_seq).';

-- (Re)creates the write trigger function and the key-change function of a tracked table from its catalog row.
create or replace function gnomon.install_write_function(p_table_id integer) returns void
language plpgsql as $$
declare
  tt gnomon.tracked_table;
  tab text; hist text;
  cols text; keys text; keyjoin text; keycoalesce text; nonkey_old text;
  body text;
begin
  select * into tt from gnomon.tracked_table where table_id = p_table_id;
  tab  := format('%I.%I', tt.schema_name, tt.table_name);
  hist := format('gnomon_t.%I', tt.history_table);
  -- the function below names no g_vid: a history made before the column had its default gets it first
  if not exists (select 1 from pg_catalog.pg_attrdef d join pg_catalog.pg_attribute a on a.attrelid = d.adrelid and a.attnum = d.adnum
                  where d.adrelid = hist::regclass and a.attname = 'g_vid') then
    execute format('alter table %s alter column g_vid set default %s', hist, gnomon.version_key_default());
  end if;

  select string_agg(format('%I', c->>'name'), ', ' order by (c->>'attnum')::int) into cols
    from jsonb_array_elements(tt.columns) c;
  select string_agg(format('%I', k), ', ' order by o) into keys from unnest(tt.key_columns) with ordinality u(k, o);
  select string_agg(format('o.%1$I = n.%1$I', k), ' and ' order by o) into keyjoin from unnest(tt.key_columns) with ordinality u(k, o);
  -- an UPDATE's version: the key (old, or new for a key that only the new side has) and the old image
  select string_agg(case when (c->>'name') = any (tt.key_columns)
                         then format('coalesce(o.%1$I, n.%1$I)', c->>'name')
                         else format('o.%I', c->>'name') end, ', ' order by (c->>'attnum')::int)
    into keycoalesce from jsonb_array_elements(tt.columns) c;
  select string_agg(format('o.%I', c->>'name'), ', ' order by (c->>'attnum')::int) into nonkey_old
    from jsonb_array_elements(tt.columns) c;

  -- The write path: one statement-level trigger function, one set-based INSERT into the history per statement.
  -- Each version holds the row's image from before the change, so the first write of a row that existed before
  -- tracking records its baseline without any probe of the history.
  -- Version keys: one nextval per version, the history's column default (gnomon.version_key_default). The sequence is
  -- not cached, so a key drawn later is larger, and keys grow along every row. (Drawing blocks of keys, one nextval per 1024 rows, needed a row_number() window, a count(*)
  -- and an array_agg() over the transition table in every statement: more than the single nextval costs a
  -- single-row write, and no less on a bulk one.)
  -- An UPDATE that changed no key writes each old row as it was ('U'). When the key-change row trigger has flagged
  -- this statement (keyed by trigger depth, so a nested statement on the same table cannot take the flag), old and
  -- new rows are paired by key: a key only the old side has was deleted ('D'), one only the new side has was
  -- inserted ('I'), so each key gets one version per statement whatever the keys were shifted or swapped to.
  -- The function is SECURITY DEFINER (only it writes history: nobody can forge a version) and resolves no name
  -- through the caller's search_path: every function, operator and type it names is schema-qualified, which costs
  -- nothing, where a SET search_path clause cost a GUC save and restore on every call. The pairing joins on the
  -- key's own equality operators, found by name: it pins search_path itself for that statement (a rare path).
  body := format($b$
begin
  if TG_OP OPERATOR(pg_catalog.=) 'UPDATE' then
    if %12$s pg_catalog.current_setting(pg_catalog.concat(%11$L, pg_catalog.pg_trigger_depth()), true)
         OPERATOR(pg_catalog.=) 'y' then
      perform pg_catalog.set_config(pg_catalog.concat(%11$L, pg_catalog.pg_trigger_depth()), '', true);
      gnomon_path := pg_catalog.current_setting('search_path');
      perform pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
      insert into %1$s (g_xid, g_op, %2$s)
      select pg_catalog.pg_current_xact_id(),
             case when o.%5$s is null then 'I' when n.%5$s is null then 'D' else 'U' end, %4$s
        from gnomon_old o full join gnomon_new n on %6$s;
      perform pg_catalog.set_config('search_path', gnomon_path, true);
    else
      insert into %1$s (g_xid, g_op, %2$s)
      select pg_catalog.pg_current_xact_id(), 'U', %9$s from gnomon_old o;
    end if;
  elsif TG_OP OPERATOR(pg_catalog.=) 'INSERT' then
    insert into %1$s (g_xid, g_op, %7$s)
    select pg_catalog.pg_current_xact_id(), 'I', %8$s from gnomon_new n;
  elsif TG_OP OPERATOR(pg_catalog.=) 'DELETE' then
    insert into %1$s (g_xid, g_op, %2$s)
    select pg_catalog.pg_current_xact_id(), 'D', %9$s from gnomon_old o;
  elsif TG_OP OPERATOR(pg_catalog.=) 'TRUNCATE' then
    %14$s
  end if;
  return null;
end $b$, hist, cols, null, keycoalesce, format('%I', tt.key_columns[1]), keyjoin, keys,
         (select string_agg(format('n.%I', k), ', ' order by o) from unnest(tt.key_columns) with ordinality u(k, o)),
         nonkey_old, tab, gnomon.key_change_setting(tt.table_id),
         -- a partitioned table moves rows between partitions as DELETE + INSERT, which fires no UPDATE row
         -- trigger: always pair rows by key there
         case when (select relkind from pg_class where oid = tt.relid) = 'p' then 'true or' else '' end,
         (select string_agg(format('t.%I', c->>'name'), ', ' order by (c->>'attnum')::int) from jsonb_array_elements(tt.columns) c),
         -- TRUNCATE: every row as a delete version. A partitioned table's rows are in its leaf partitions, each with
         -- this function as its own TRUNCATE trigger (gnomon.install_partition_triggers): a TRUNCATE of the table, or
         -- of a partitioned partition, fires theirs too, so a partitioned one records nothing itself and a leaf
         -- records its own rows (a TRUNCATE of a single partition fires nothing above it)
         case when (select relkind from pg_class where oid = tt.relid) = 'p'
              then format($t$if (select c.relkind from pg_catalog.pg_class c where c.oid OPERATOR(pg_catalog.=) TG_RELID)
         OPERATOR(pg_catalog.<>) 'p' then
      execute %L OPERATOR(pg_catalog.||) pg_catalog.quote_ident(TG_TABLE_SCHEMA) OPERATOR(pg_catalog.||) '.'
              OPERATOR(pg_catalog.||) pg_catalog.quote_ident(TG_TABLE_NAME) OPERATOR(pg_catalog.||) ' t';
    end if;$t$,
                          format('insert into %s (g_xid, g_op, %s) select '
                                 || 'pg_catalog.pg_current_xact_id(), ''D'', %s from ', hist, cols,
                                 (select string_agg(format('t.%I', c->>'name'), ', ' order by (c->>'attnum')::int)
                                    from jsonb_array_elements(tt.columns) c)))
              else format($t$insert into %s (g_xid, g_op, %s)
    select pg_catalog.pg_current_xact_id(), 'D', %s from %s t;$t$,
                          hist, cols,
                          (select string_agg(format('t.%I', c->>'name'), ', ' order by (c->>'attnum')::int)
                             from jsonb_array_elements(tt.columns) c), tab) end);
  -- (every column is qualified in the body, so no column can collide with the variable)
  body := 'declare gnomon_path text;' || body;
  execute format('create or replace function gnomon_t.%I() returns trigger language plpgsql security definer as %L',
                 tt.trigger_function, body);
  execute format('create or replace function gnomon_t.%I() returns trigger language plpgsql as %L',
                 tt.key_change_function,
                 format($b$begin perform set_config(%L || pg_trigger_depth(), 'y', true); return null; end$b$,
                        gnomon.key_change_setting(tt.table_id)));
end $$;
comment on function gnomon.install_write_function(integer) is
  'Internal: (re)creates a tracked table''s write trigger function and key-change function (gnomon_t.<base>_write, _key_change).';


-- The prefix of the setting by which an UPDATE's key change is flagged to the table's write trigger function, for one
-- statement: the prefix, then the trigger depth. Set by the key-change row trigger, or by gnomon.write_c()
-- (gnomon-c/src/gnomon.c builds the same name: keep both in step); read and cleared by the write trigger function.
create or replace function gnomon.key_change_setting(p_table_id integer) returns text
language sql immutable strict as $$ select 'gnomon.key_change_' || p_table_id || '_' $$;
comment on function gnomon.key_change_setting(integer) is
  'The prefix (then the trigger depth) of the setting that flags an UPDATE''s key change to a tracked table''s write trigger.';

-- The names of the write triggers of every tracked table, the one list: the four statement-level triggers, then
-- (unless statement_only) the key-change row trigger, which only the PL/pgSQL write path has.
create or replace function gnomon.write_trigger_names(statement_only boolean default false) returns name[]
language sql immutable strict as $$
  select case when statement_only then array['gnomon_insert', 'gnomon_update', 'gnomon_delete', 'gnomon_truncate']::name[]
              else array['gnomon_insert', 'gnomon_update', 'gnomon_delete', 'gnomon_truncate', 'gnomon_key_change']::name[] end
$$;
comment on function gnomon.write_trigger_names(boolean) is
  'The names of a tracked table''s write triggers (the four statement triggers, and the key-change row trigger unless statement_only).';

-- Checks that every tracked table has its write triggers; GN072 names the tables that lack some. A dump restored on
-- a server without the C module loses them: CREATE FUNCTION ... LANGUAGE C checks the library even during a restore,
-- so gnomon.write_c() and then the CREATE TRIGGERs calling it fail, and writes would succeed without history.
-- Gnomon.open() (Java) calls it at start-up.
create or replace function gnomon.check_triggers() returns void
language plpgsql stable as $$
declare
  missing text;
  disabled text;
  narrow text;
begin
  select string_agg(format('%s (%s)', t.tab, t.names), '; ' order by t.tab) into missing
    from (select format('%I.%I', tt.schema_name, tt.table_name) as tab, string_agg(n, ', ' order by o) as names
            from gnomon.tracked_table tt
           cross join lateral unnest(gnomon.write_trigger_names()) with ordinality u(n, o)
           where not exists (select 1 from pg_trigger g where g.tgrelid = tt.relid and g.tgname = u.n)
             -- the key-change row trigger belongs to the PL/pgSQL write path only
             and (u.n <> 'gnomon_key_change'
                  or not exists (select 1 from pg_trigger g where g.tgrelid = tt.relid and g.tgname = 'gnomon_update'
                                    and g.tgfoid = pg_catalog.to_regprocedure('gnomon.write_c()')))
           group by 1) t;
  -- and the partitions' (gnomon.install_partition_triggers): without them a write naming a partition leaves no version
  missing := nullif(concat_ws('; ', missing,
    (select string_agg(format('%s (%s)', t.tab, t.names), '; ' order by t.tab)
       from (select format('%s, a partition of %I.%I', p.relid::regclass, tt.schema_name, tt.table_name) as tab,
                    string_agg(u.n, ', ' order by u.o) as names
               from gnomon.tracked_table tt join pg_class r on r.oid = tt.relid and r.relkind = 'p'
              cross join lateral pg_partition_tree(tt.relid) p
               join pg_class c on c.oid = p.relid and c.relkind in ('r', 'p')
              cross join lateral unnest(gnomon.write_trigger_names(true)) with ordinality u(n, o)
              where p.relid <> tt.relid
                and not exists (select 1 from pg_trigger g where g.tgrelid = p.relid and g.tgname = u.n)
              group by 1) t)), '');
  if missing is not null then
    raise exception using errcode = 'GN072',
      message = format('tracked tables lack Gnomon''s write triggers, so their writes leave no history: %s', missing),
      detail = 'A dump restored on a server without the Gnomon C module loses them (the C function and the triggers calling it fail to restore).',
      hint = 'Re-create them as a superuser: select gnomon.use_c_module(false); (the PL/pgSQL triggers), or select gnomon.use_c_module(true); once the C module is installed on this server.';
  end if;
  -- a key-change trigger for key UPDATEs only on a table whose BEFORE UPDATE row trigger could change a key: made
  -- where the trigger guard did not run (single-user mode, session_replication_role = replica, the guard disabled)
  select string_agg(format('%I.%I (table_id %s)', tt.schema_name, tt.table_name, tt.table_id), ', ' order by tt.table_id)
    into narrow
    from gnomon.tracked_table tt
   where gnomon.key_change_trigger_of_key(tt.relid) and gnomon.key_set_by_before_trigger(tt.relid);
  if narrow is not null then
    raise exception using errcode = 'GN072',
      message = format('tracked tables have a BEFORE UPDATE row trigger, which can change a key an UPDATE does not name, '
                       'but a key-change trigger that fires only for UPDATEs naming the key, so such changes would be '
                       'versioned as updates of the old key: %s', narrow),
      hint = 'Re-create the key-change trigger for each: select gnomon.refresh_key_change_trigger(table_id);';
  end if;
  disabled := gnomon.disabled_write_triggers();
  if disabled is not null then
    raise exception using errcode = 'GN072',
      message = format('tracked tables have Gnomon''s write triggers disabled, so their writes leave no history: %s', disabled),
      detail = 'ALTER TABLE ... DISABLE TRIGGER (ALL, USER or the trigger by name) turns them off; pg_restore --disable-triggers does so only for the length of a restore.',
      hint = 'Enable them again: alter table <table> enable trigger <trigger>; for each one named.';
  end if;
end $$;
comment on function gnomon.check_triggers() is
  'Raises GN072 naming every tracked table, or partition of one, that lacks its write triggers (for example after a restore without the C module), or a tracked table that has them disabled.';

-- The tracked tables whose write triggers are disabled (ALTER TABLE ... DISABLE TRIGGER, or ... ENABLE REPLICA TRIGGER,
-- after which they fire only in sessions with session_replication_role = replica: the table's own writes leave no
-- history), as 'schema.table (trigger, ...)' joined by '; ', or null when there is none. Used by check_triggers (GN072) and the DDL guard (a WARNING).
create or replace function gnomon.disabled_write_triggers(p_relid oid default null) returns text
language sql stable as $$
  select string_agg(format('%s (%s)', t.tab, t.names), '; ' order by t.tab)
    from (select format('%I.%I', tt.schema_name, tt.table_name) as tab, string_agg(g.tgname, ', ' order by o) as names
            from gnomon.tracked_table tt
           cross join lateral unnest(gnomon.write_trigger_names()) with ordinality u(n, o)
            join pg_trigger g on g.tgrelid = tt.relid and g.tgname = u.n
           where g.tgenabled in ('D', 'R') and (p_relid is null or tt.relid = p_relid)
           group by 1) t
$$;
comment on function gnomon.disabled_write_triggers(oid) is
  'The tracked tables (all, or the one given) whose Gnomon write triggers are disabled, with the triggers'' names; null when none is.';

-- The interface version of the C module this catalog expects, the one definition: gnomon.use_c_module() compares
-- the library's gnomon_c_version() with it, and gnomon.write_c() does once per session before its first write.
create or replace function gnomon.c_module_interface_version() returns integer
language sql immutable as $$ select 1 $$;
comment on function gnomon.c_module_interface_version() is 'The interface version of the Gnomon C module this catalog expects.';

-- Creates the four statement-level write triggers on a table (its name as SQL), calling fn (as SQL): AFTER INSERT,
-- UPDATE and DELETE with the transition tables gnomon_new / gnomon_old, and BEFORE TRUNCATE, so the history holds the
-- rows before they go. The one definition of their shape, which gnomon.write_c() checks.
create or replace function gnomon.create_write_triggers(rel text, fn text) returns void
language plpgsql as $$
begin
  execute format('create trigger gnomon_insert after insert on %s referencing new table as gnomon_new '
                 'for each statement execute function %s', rel, fn);
  execute format('create trigger gnomon_update after update on %s referencing old table as gnomon_old new table as gnomon_new '
                 'for each statement execute function %s', rel, fn);
  execute format('create trigger gnomon_delete after delete on %s referencing old table as gnomon_old '
                 'for each statement execute function %s', rel, fn);
  execute format('create trigger gnomon_truncate before truncate on %s for each statement execute function %s', rel, fn);
end $$;
comment on function gnomon.create_write_triggers(text, text) is
  'Creates the four statement-level write triggers (gnomon_insert, gnomon_update, gnomon_delete, gnomon_truncate) on a table, calling the given function.';

-- Gives a trigger an enabled state as pg_trigger.tgenabled spells it ('O' the default, 'A' ENABLE ALWAYS, 'R' ENABLE
-- REPLICA, 'D' DISABLE): nothing for 'O' or null. Re-creating a trigger resets it to 'O'; install_triggers and
-- refresh_key_change_trigger put back what was there.
create or replace function gnomon.set_trigger_state(p_table text, p_trigger name, p_state "char") returns void
language plpgsql as $$
begin
  if p_state is not null and p_state <> 'O' then
    execute format('alter table %s %s trigger %I', p_table,
                   case p_state when 'A' then 'enable always' when 'R' then 'enable replica' else 'disable' end, p_trigger);
  end if;
end $$;
comment on function gnomon.set_trigger_state(text, name, "char") is
  'Internal: gives a table''s trigger the enabled state pg_trigger.tgenabled spells (O, A, R or D); nothing for O.';

-- Whether a tracked table's key-change row trigger fires for UPDATEs naming the key only (AFTER UPDATE OF its key
-- columns), or for every UPDATE; null when the table has none (the C write path).
create or replace function gnomon.key_change_trigger_of_key(p_relid oid) returns boolean
language sql stable as $$
  select pg_catalog.cardinality(g.tgattr::pg_catalog.int2[]) > 0
    from pg_catalog.pg_trigger g where g.tgrelid = p_relid and g.tgname = 'gnomon_key_change' and g.tgparentid = 0
$$;
comment on function gnomon.key_change_trigger_of_key(oid) is
  'Internal: whether a tracked table''s key-change row trigger is AFTER UPDATE OF its key columns (null when it has none).';

-- Whether an UPDATE of a table can change its key without naming a key column: a row-level BEFORE UPDATE trigger of
-- its own (the user's; Gnomon has none) may assign NEW's key whatever the statement set.
create or replace function gnomon.key_set_by_before_trigger(p_relid oid) returns boolean
language sql stable as $$
  select exists (select 1 from pg_catalog.pg_trigger g
                  where g.tgrelid = p_relid and not g.tgisinternal
                    and (g.tgtype::integer & 19) = 19)  -- TRIGGER_TYPE_ROW | TRIGGER_TYPE_BEFORE | TRIGGER_TYPE_UPDATE
$$;
comment on function gnomon.key_set_by_before_trigger(oid) is
  'Internal: whether a table has a row-level BEFORE UPDATE trigger, which could change a key that an UPDATE does not name.';

-- The CREATE TRIGGER of a tracked table's key-change row trigger (the PL/pgSQL write path's), the one definition. It
-- is column-specific, AFTER UPDATE OF the key columns: PostgreSQL then fires it, and evaluates its WHEN clause, only
-- for a statement that assigns a key column; every other UPDATE skips it before preparing the clause (which it
-- otherwise did again for every statement: about a tenth of a tracked single-row UPDATE's work). A key can change
-- without being assigned only through a row-level BEFORE UPDATE trigger, so a table with one gets the trigger on
-- every UPDATE (gnomon.key_set_by_before_trigger); the DDL guard switches the form when such a trigger comes or goes
-- (gnomon.trigger_guard).
create or replace function gnomon.key_change_trigger_ddl(p_table_id integer) returns text
language sql stable as $$
  select format('create or replace trigger gnomon_key_change after update%s on %I.%I for each row when (%s) '
                'execute function gnomon_t.%I()',
                case when gnomon.key_set_by_before_trigger(tt.relid) then ''
                     else ' of ' || (select string_agg(format('%I', k), ', ' order by o)
                                       from unnest(tt.key_columns) with ordinality u(k, o)) end,
                tt.schema_name, tt.table_name,
                (select string_agg(format('old.%1$I is distinct from new.%1$I', k), ' or ' order by o)
                   from unnest(tt.key_columns) with ordinality u(k, o)),
                tt.key_change_function)
    from gnomon.tracked_table tt where tt.table_id = p_table_id
$$;
comment on function gnomon.key_change_trigger_ddl(integer) is
  'Internal: the CREATE TRIGGER statement of a tracked table''s key-change row trigger (AFTER UPDATE OF its key columns, or of any column when a BEFORE UPDATE row trigger could change the key).';

-- Re-creates a tracked table's key-change row trigger when its form (UPDATE OF the key, or every UPDATE) is no longer
-- the one gnomon.key_change_trigger_ddl gives, keeping its enabled state. Nothing where the table has none (the C
-- write path). Returns whether it re-created it. It runs as the catalog's owner: the event triggers call it for the
-- role that created or dropped a trigger, which may hold the TRIGGER privilege without owning the table (putting
-- back a disabled state needs the owner). It takes nothing from its caller but the table's id and does only what the
-- table's triggers ask for, so it is left executable by every role.
create or replace function gnomon.refresh_key_change_trigger(p_table_id integer) returns boolean
language plpgsql security definer set search_path = pg_catalog, pg_temp as $$
declare
  tt gnomon.tracked_table;
  state "char";
begin
  select * into tt from gnomon.tracked_table where table_id = p_table_id;
  if gnomon.key_change_trigger_of_key(tt.relid) is distinct from gnomon.key_set_by_before_trigger(tt.relid) then
    return false;  -- none (null), or already the form it should have
  end if;
  select g.tgenabled into state
    from pg_catalog.pg_trigger g where g.tgrelid = tt.relid and g.tgname = 'gnomon_key_change' and g.tgparentid = 0;
  -- CREATE OR REPLACE TRIGGER resets the enabled state, which is put back
  execute gnomon.key_change_trigger_ddl(p_table_id);
  perform gnomon.set_trigger_state(format('%I.%I', tt.schema_name, tt.table_name), 'gnomon_key_change', state);
  return true;
end $$;
comment on function gnomon.refresh_key_change_trigger(integer) is
  'Internal: re-creates a tracked table''s key-change row trigger in the form gnomon.key_change_trigger_ddl gives when it differs, keeping its enabled state.';

-- The write triggers of a tracked table, the one place that creates them: four statement-level triggers with
-- transition tables, and the key-change row trigger. Behind the statement triggers is the optional C module's
-- gnomon.write_c() when it is enabled (gnomon.use_c_module), else the table's generated PL/pgSQL function; both
-- write the same versions (the C function finds key changes itself and hands them, partitioned UPDATEs and TRUNCATE
-- to the PL/pgSQL one).
-- (use_c: whether they call gnomon.write_c(); by default, whenever the C module is enabled)
create or replace function gnomon.install_triggers(p_table_id integer, use_c boolean default null) returns void
language plpgsql as $$
declare
  tt gnomon.tracked_table;
  tab text;
  fn text;
  old record;
  enabled jsonb := '{}';
  trg name;
begin
  select * into tt from gnomon.tracked_table where table_id = p_table_id;
  if not found then
    raise exception using errcode = 'GN001', message = format('no tracked table has id %s', p_table_id),
      hint = 'Pass a table_id from gnomon.tracked_table (select table_id from gnomon.tracked_table where relid = ''schema.table''::regclass).';
  end if;
  tab := format('%I.%I', tt.schema_name, tt.table_name);
  fn := case when coalesce(use_c, gnomon.c_module_enabled()) then 'gnomon.write_c()' else format('gnomon_t.%I()', tt.trigger_function) end;
  -- dropping and creating a trigger would reset ENABLE ALWAYS / REPLICA / DISABLE: remember each trigger's state
  for old in select t.tgname, t.tgenabled from pg_trigger t
              where t.tgrelid = tt.relid and t.tgname = any (gnomon.write_trigger_names()) loop
    enabled := enabled || jsonb_build_object(old.tgname, old.tgenabled::text);
    execute format('drop trigger %I on %s', old.tgname, tab);
  end loop;
  perform gnomon.create_write_triggers(tab, fn);
  -- fires only for rows whose key an UPDATE changed, and only to tell the statement trigger to pair old and new rows
  -- (gnomon.write_c() compares the old and new transition rows itself and flags the statement the same way: no row
  -- trigger then, whose WHEN clause PostgreSQL prepares again for every statement)
  if fn <> 'gnomon.write_c()' then
    execute gnomon.key_change_trigger_ddl(p_table_id);
    -- a new key-change trigger takes the state of the update trigger it serves
    if not enabled ? 'gnomon_key_change' and enabled ? 'gnomon_update' then
      enabled := enabled || jsonb_build_object('gnomon_key_change', enabled->>'gnomon_update');
    end if;
  end if;
  for trg in select t.tgname from pg_trigger t where t.tgrelid = tt.relid and t.tgname = any (gnomon.write_trigger_names()) loop
    perform gnomon.set_trigger_state(tab, trg, (enabled->>trg)::"char");
  end loop;
  perform gnomon.install_partition_triggers(p_table_id);
end $$;
comment on function gnomon.install_triggers(integer, boolean) is
  'Creates the write triggers of a tracked table, calling the C module''s gnomon.write_c() when it is enabled, else the generated PL/pgSQL function.';

-- The partitions a DETACH PARTITION ... CONCURRENTLY left pending below a partitioned table (interrupted after its first
-- transaction: pg_inherits.inhdetachpending), with the partitions below them. pg_partition_tree leaves them out, and
-- reads of the table no longer see their rows, but they are still partitions until ... FINALIZE completes the detach:
-- they keep the write triggers (gnomon.install_partition_triggers), so that deleting their rows is versioned and the
-- DDL guard knows them for the table's when the detach completes (gnomon.check_partitions_left).
-- (oids, not regclass: a generated jOOQ table of regclass registers the type in jOOQ's static registry, and the
-- catalog's code generation then differs by which classes a JVM loaded first)
drop function if exists gnomon.detach_pending_partitions(regclass);
create function gnomon.detach_pending_partitions(root regclass) returns setof oid
language sql stable as $$
  select d.relid::oid
    from pg_inherits i cross join lateral pg_partition_tree(i.inhrelid) d
   where i.inhdetachpending and i.inhparent in (select p.relid from pg_partition_tree(root) p)
$$;
comment on function gnomon.detach_pending_partitions(regclass) is
  'Internal: the partitions an interrupted DETACH PARTITION ... CONCURRENTLY left pending below a partitioned table, with those below them.';

-- The write triggers of the partitions of a tracked partitioned table, at every level. PostgreSQL fires a statement
-- trigger only on the table a statement names: an INSERT, UPDATE, DELETE or TRUNCATE naming a partition fired none of
-- the table's, and left no version. So each partition gets the four statement triggers too, calling the table's
-- PL/pgSQL trigger function (the C one serves the table itself only), which writes the table's history: a write
-- through the table fires the table's triggers only, a write naming a partition that partition's only (the
-- key-change row trigger PostgreSQL clones onto each partition by itself). Creates the missing ones, and drops
-- Gnomon's write triggers from tables that are no longer partitions of the table (detached): they would go on
-- writing its history. A partition left pending by an interrupted DETACH ... CONCURRENTLY keeps them
-- (gnomon.detach_pending_partitions). Called by gnomon.install_triggers, and by the DDL guard when partitions come or go.
create or replace function gnomon.install_partition_triggers(p_table_id integer) returns void
language plpgsql set client_min_messages = warning as $$
declare
  tt gnomon.tracked_table;
  fn regprocedure;
  part regclass;
  trg record;
  n name;
begin
  select * into tt from gnomon.tracked_table where table_id = p_table_id;
  fn := to_regprocedure(format('gnomon_t.%I()', tt.trigger_function));
  if fn is null then
    return;
  end if;
  for trg in select g.tgrelid::regclass as rel, g.tgname from pg_trigger g
              where g.tgfoid = fn and g.tgparentid = 0 and g.tgrelid <> tt.relid
                and g.tgname = any (gnomon.write_trigger_names(true))
                and g.tgrelid not in (select p.relid from pg_partition_tree(tt.relid) p)
                and g.tgrelid not in (select gnomon.detach_pending_partitions(tt.relid)) loop
    execute format('drop trigger %I on %s', trg.tgname, trg.rel);
  end loop;
  if (select relkind from pg_class where oid = tt.relid) <> 'p' then
    return;
  end if;
  for part in select p.relid from pg_partition_tree(tt.relid) p
               join pg_class c on c.oid = p.relid and c.relkind in ('r', 'p')
              where p.relid <> tt.relid
                and (select count(*) from pg_trigger g where g.tgrelid = p.relid and g.tgfoid = fn
                        and g.tgname = any (gnomon.write_trigger_names(true))) < 4
              order by p.level, p.relid loop
    foreach n in array gnomon.write_trigger_names(true) loop
      execute format('drop trigger if exists %I on %s', n, part);
    end loop;
    perform gnomon.create_write_triggers(part::text, fn::text);
  end loop;
end $$;
comment on function gnomon.install_partition_triggers(integer) is
  'Creates the write triggers of the partitions of a tracked partitioned table (a write naming a partition fires none of the table''s), and drops them from detached ones.';

-- Whether the optional C write path is enabled in this database (gnomon.use_c_module(true) created gnomon.write_c()).
create or replace function gnomon.c_module_enabled() returns boolean
language sql stable as $$ select pg_catalog.to_regprocedure('gnomon.write_c()') is not null $$;
comment on function gnomon.c_module_enabled() is 'Whether the optional C write path (gnomon.write_c()) is enabled in this database.';

-- Enables or disables the optional C write path: loads the library (a name found on dynamic_library_path, by
-- default $libdir/gnomon after `make install` in gnomon-c, or an absolute path), checks its interface version,
-- creates gnomon.write_c() and re-creates the write triggers of every tracked table to call it; disabling puts the
-- PL/pgSQL trigger functions back and drops the C functions. Needs a superuser (C is an untrusted language); takes
-- each tracked table's trigger lock briefly. Returns how many tracked tables were switched.
-- (client_min_messages = warning: the DROP ... IF EXISTS of functions an earlier release or a first enable never made
-- said NOTICE once each, a dozen lines on a psql operator's screen)
create or replace function gnomon.use_c_module(enable boolean, library text default 'gnomon') returns integer
language plpgsql set client_min_messages = warning as $$
declare
  v integer;
  n integer := 0;
  tid integer;
  expected integer := gnomon.c_module_interface_version();
begin
  if enable is null or (enable and (library is null or library = '')) then
    raise exception using errcode = 'GN021', message = 'gnomon.use_c_module needs enable true or false, and a library when enabling',
      hint = 'select gnomon.use_c_module(true); or select gnomon.use_c_module(true, ''/path/to/gnomon.so'');';
  end if;
  if (enable or gnomon.c_module_enabled()) and not (select r.rolsuper from pg_roles r where r.rolname = current_user) then
    raise exception using errcode = 'GN070',
      message = format('gnomon.use_c_module(%s) needs a superuser; %I is not one', enable, current_user),
      detail = 'C functions are untrusted: only a superuser may create or drop gnomon.write_c().',
      hint = format('Run select gnomon.use_c_module(%s); as a superuser (for example postgres).', enable);
  end if;
  if enable then
    begin
      execute format('create or replace function gnomon.c_module_version() returns integer language c strict as %L, %L',
                     library, 'gnomon_c_version');
      execute 'select gnomon.c_module_version()' into v;
    exception when others then
      raise exception using errcode = 'GN070',
        message = format('the Gnomon C module %L cannot be loaded: %s', library, sqlerrm),
        detail = format('SQLSTATE %s. Creating a C function needs a superuser, and the library must be readable by the server.', sqlstate),
        hint = 'Build and install it on the database server (cd gnomon-c && make && make install, with the server''s pg_config), '
               'then run select gnomon.use_c_module(true); as a superuser. Without it, Gnomon uses its PL/pgSQL triggers.';
    end;
    if v is distinct from expected then
      execute 'drop function gnomon.c_module_version()';
      raise exception using errcode = 'GN070',
        message = format('the Gnomon C module %L has interface version %s, this catalog expects %s', library, v, expected),
        hint = 'Rebuild and reinstall gnomon-c from the same Gnomon release as the catalog (cd gnomon-c && make && make install), then run select gnomon.use_c_module(true); again.';
    end if;
    execute format('create or replace function gnomon.write_c() returns trigger language c as %L, %L', library, 'gnomon_write');
    comment on function gnomon.write_c() is
      'The C write trigger of tracked tables (the optional C module); created by gnomon.use_c_module(true).';
    comment on function gnomon.c_module_version() is 'The interface version of the loaded Gnomon C module.';
    -- the read path (gnomon-c/src/read.c): the as-of reads of tables without checkpoints call it
    begin
      execute format('create or replace function gnomon.read_snapshot_c(coordinate text, track_xid xid8, table_id integer) '
                     'returns pg_snapshot language c stable parallel safe as %L, %L', library, 'gnomon_read_snapshot_c');
      execute format('create or replace function gnomon.row_visible_c(coordinate text, track_xid xid8, table_id integer, row_xmin xid) '
                     'returns boolean language c stable parallel safe as %L, %L', library, 'gnomon_row_visible_c');
      execute format('create or replace function gnomon.row_current_c(coordinate text, track_xid xid8, table_id integer, row_xmin xid, '
                     'helper oid, variadic keys "any") returns boolean language c stable parallel safe as %L, %L', library, 'gnomon_row_current_c');
      execute format('create or replace function gnomon.first_invisible_c(coordinate text, track_xid xid8, table_id integer, g_xid xid8, '
                     'g_op "char", g_vid bigint, helper oid, variadic keys "any") returns boolean language c stable parallel safe as %L, %L',
                     library, 'gnomon_first_invisible_c');
      execute format('create or replace function gnomon.read_xmin_c(coordinate text, track_xid xid8, table_id integer) '
                     'returns xid8 language c stable parallel safe as %L, %L', library, 'gnomon_read_xmin_c');
      execute format('create or replace function gnomon.xid_invisible_c(coordinate text, track_xid xid8, table_id integer, xid xid8) '
                     'returns boolean language c stable parallel safe as %L, %L', library, 'gnomon_xid_invisible_c');
      -- the point read (gnomon.install_as_of_c): one arm when the caller pins the key, chosen while planning
      execute format('create or replace function gnomon.as_of_support_c(internal) returns internal language c strict as %L, %L',
                     library, 'gnomon_as_of_support_c');
      execute format('create or replace function gnomon.as_of_keyed_c(want boolean, variadic keys "any") returns boolean '
                     'language c immutable parallel safe support gnomon.as_of_support_c as %L, %L', library, 'gnomon_as_of_keyed_c');
      execute format('create or replace function gnomon.as_of_key_c(row_type anyelement, coordinate text, track_xid xid8, table_id integer, '
                     'fallback regprocedure, keyed boolean, variadic attnum_and_values "any") returns setof anyelement '
                     'language c stable parallel safe rows 1 support gnomon.as_of_support_c as %L, %L', library, 'gnomon_as_of_key_c');
      -- the change feed's page of main with images (gnomon-c/src/feed_page.c), for gnomon.feed_page_plan
      -- (its earlier signature, without the positions, goes: the module's library has only this one)
      if to_regprocedure('gnomon.feed_page_c(integer,pg_snapshot,pg_snapshot,pg_snapshot,boolean,xid8[],bigint[],xid8,xid8,bigint,bigint,bigint,bigint,xid8,xid8)') is not null then
        drop function gnomon.feed_page_c(integer, pg_snapshot, pg_snapshot, pg_snapshot, boolean, xid8[], bigint[], xid8, xid8, bigint, bigint, bigint, bigint, xid8, xid8);
      end if;
      execute format('create or replace function gnomon.feed_page_c(table_id integer, prev pg_snapshot, cur pg_snapshot, '
                     'start pg_snapshot, images boolean, sx xid8[], st bigint[], lo xid8, hi xid8, from_tkey bigint, '
                     'from_vid bigint, to_tkey bigint, to_vid bigint, split xid8, recent xid8, whole boolean, '
                     'cur_id bigint, from_tick bigint) '
                     'returns table (xid xid8, vid bigint, tkey bigint, op "char", key json, before json, after json, '
                     'event_position text, event_op text) '
                     'language c stable rows 1000 as %L, %L', library, 'gnomon_feed_page_c');
      -- its batch order, for gnomon.feed_batch_of
      execute format('create or replace function gnomon.feed_batch_c(table_id integer, prev pg_snapshot, cur pg_snapshot, '
                     'start pg_snapshot, out txn_xid xid8[], out txn_key bigint[], out txn_upto bigint[], '
                     'out xid_sorted xid8[], out key_by_xid bigint[]) language c stable as %L, %L',
                     library, 'gnomon_feed_batch_c');
    exception when undefined_function then
      raise exception using errcode = 'GN070',
        message = format('the Gnomon C module %L has no read functions: %s', library, sqlerrm),
        hint = 'Rebuild and reinstall gnomon-c from the same Gnomon release as the catalog (cd gnomon-c && make && make install), then run select gnomon.use_c_module(true); again.';
    end;
    comment on function gnomon.read_snapshot_c(text, xid8, integer) is
      'The checked snapshot of a coordinate for an as-of read, as gnomon.read_snapshot() (same errors), from a per-session cached parse (the optional C module).';
    comment on function gnomon.row_current_c(text, xid8, integer, xid, oid, "any") is
      'True when gnomon.row_visible_c is true, else the table''s helper gnomon_t.<base>_as_of_h for the key: whether a live row is its key''s state as of the coordinate (the optional C module''s as-of read path).';
    comment on function gnomon.first_invisible_c(text, xid8, integer, xid8, "char", bigint, oid, "any") is
      'Whether a history version is the first of its key the coordinate cannot see, and not an insert (the optional C module''s as-of read path).';
    comment on function gnomon.read_xmin_c(text, xid8, integer) is
      'The xmin of gnomon.read_snapshot_c(coordinate, track_xid, table_id) (same errors); the optional C module''s as-of read path.';
    comment on function gnomon.xid_invisible_c(text, xid8, integer, xid8) is
      'Whether a transaction is invisible in the snapshot of gnomon.read_snapshot_c(coordinate, track_xid, table_id) (same errors); the optional C module''s as-of read path.';
    comment on function gnomon.row_visible_c(text, xid8, integer, xid) is
      'Whether a live row''s xmin is visible in a coordinate''s snapshot (null: cannot tell, ask the history); the optional C module''s as-of read path.';
    comment on function gnomon.as_of_support_c(internal) is
      'Planner support of gnomon.as_of_keyed_c and gnomon.as_of_key_c: finds the key values a query pins in an arm of an as-of read (the optional C module''s point read).';
    comment on function gnomon.as_of_keyed_c(boolean, "any") is
      'Folded while planning: want when the arm''s conditions pin every key column given, else not want (the optional C module''s point read).';
    comment on function gnomon.feed_page_c(integer, pg_snapshot, pg_snapshot, pg_snapshot, boolean, xid8[], bigint[], xid8, xid8, bigint, bigint, bigint, bigint, xid8, xid8, boolean, bigint, bigint) is
      'A change-feed page of a table on main, the rows of its gnomon_t.<base>_page with the same parameters, each with its position (whole, cur_id and from_tick as gnomon.feed_page_plan''s statement writes positions) and its operation''s letter (the optional C module''s page reader, run by gnomon.feed_read).';
    comment on function gnomon.feed_batch_c(integer, pg_snapshot, pg_snapshot, pg_snapshot) is
      'The order of a change-feed batch of one table on main, the arrays gnomon.feed_batch_of computes in SQL (the optional C module''s page reader).';
    comment on function gnomon.as_of_key_c(anyelement, text, xid8, integer, regprocedure, boolean, "any") is
      'The row of a key as of a coordinate: the live row when its xmin is visible there, else the table''s fallback gnomon_t.<base>_as_of_k (the optional C module''s point read).';
  else
    drop function if exists gnomon.row_visible_c(text, xid8, integer, xid);
    drop function if exists gnomon.row_current_c(text, xid8, integer, xid, oid, "any");
    drop function if exists gnomon.first_invisible_c(text, xid8, integer, xid8, "char", bigint, oid, "any");
    drop function if exists gnomon.read_xmin_c(text, xid8, integer);
    drop function if exists gnomon.xid_invisible_c(text, xid8, integer, xid8);
    drop function if exists gnomon.read_snapshot_c(text, xid8, integer);
    drop function if exists gnomon.as_of_keyed_c(boolean, "any");
    drop function if exists gnomon.as_of_key_c(anyelement, text, xid8, integer, regprocedure, boolean, "any");
    drop function if exists gnomon.as_of_support_c(internal);
    drop function if exists gnomon.feed_page_c(integer, pg_snapshot, pg_snapshot, pg_snapshot, boolean, xid8[], bigint[], xid8, xid8, bigint, bigint, bigint, bigint, xid8, xid8);
    drop function if exists gnomon.feed_page_c(integer, pg_snapshot, pg_snapshot, pg_snapshot, boolean, xid8[], bigint[], xid8, xid8, bigint, bigint, bigint, bigint, xid8, xid8, boolean, bigint, bigint);
    drop function if exists gnomon.feed_batch_c(integer, pg_snapshot, pg_snapshot, pg_snapshot);
  end if;
  for tid in select table_id from gnomon.tracked_table order by table_id loop
    perform gnomon.install_triggers(tid, enable);
    -- the as-of reads follow the module: on its read path, or back on the SQL one
    perform gnomon.install_as_of(tid);
    n := n + 1;
  end loop;
  -- branch views: the C module's branch read (gnomon.branch_pick_c, R__08), or back to the SQL read
  perform gnomon.branch_use_c(enable, library);
  -- the change feed's gnomon.feed_read: in C with the page reader, or back in PL/pgSQL (R__07)
  perform gnomon.install_feed_read();
  if not enable then
    begin
      drop function if exists gnomon.write_c();
    exception when dependent_objects_still_exist then
      raise exception using errcode = 'GN070',
        message = format('gnomon.write_c() cannot be dropped: other triggers call it (%s)',
                         (select string_agg(format('%I on %s', t.tgname, t.tgrelid::regclass), ', ' order by t.tgrelid::regclass::text, t.tgname)
                            from pg_trigger t where t.tgfoid = pg_catalog.to_regprocedure('gnomon.write_c()'))),
        detail = 'Only Gnomon''s own write triggers of tracked tables may call gnomon.write_c().',
        hint = 'Drop those triggers (drop trigger NAME on TABLE;), then run select gnomon.use_c_module(false); again.';
    end;
    drop function if exists gnomon.c_module_version();
  end if;
  return n;
end $$;
comment on function gnomon.use_c_module(boolean, text) is
  'Enables (true) or disables (false) the optional C write path for every tracked table; returns how many tables were switched.';

-- Whether as-of reads use the optional C module (gnomon.use_c_module(true) created its read functions).
create or replace function gnomon.c_read_enabled() returns boolean
language sql stable as $$ select pg_catalog.to_regprocedure('gnomon.row_current_c(text,xid8,integer,xid,oid,"any")') is not null $$;
comment on function gnomon.c_read_enabled() is 'Internal: whether the generated as-of reads call the optional C module (gnomon.row_current_c).';

-- Whether the C module's point read is there (gnomon.use_c_module(true) with a library that has it).
create or replace function gnomon.c_point_read_enabled() returns boolean
language sql stable as $$ select pg_catalog.to_regprocedure('gnomon.as_of_key_c(anyelement,text,xid8,integer,regprocedure,boolean,"any")') is not null $$;
comment on function gnomon.c_point_read_enabled() is 'Internal: whether the generated as-of reads have the optional C module''s point read (gnomon.as_of_key_c).';

-- The body of <table>_as_of(coordinate text) on the C module's read path, for a table without checkpoints; creates its
-- helper gnomon_t.<base>_as_of_h. Two arms, each one scan with a filter, where the SQL path starts an anti-join and a
-- DISTINCT ON over the history (a prepared read's generic plan starts every node at each execution: docs/performance.md,
-- "Past reads"):
--  - the live row, when its xmin is visible in the coordinate (gnomon.row_current_c: gnomon.row_visible_c, from a
--    cached parse of the coordinate): then no version of its key can be invisible there (each write of a key waits for
--    the row lock or the unique index entry of the write before it, so a write the coordinate cannot see never precedes
--    one it sees); otherwise it calls the helper, which asks the history as the SQL path's anti-join does (an invisible
--    xmin does not prove the key changed: a table rewrite gives every row the rewriting xid and writes no version);
--  - for keys changed since the coordinate, deleted ones included, the image of the first version the coordinate cannot
--    see (none when that version is the key's insert): the history's index probe from the coordinate's xmin
--    (gnomon.read_xmin_c), and gnomon.first_invisible_c, which calls the helper only for a version the coordinate
--    cannot see, to check that no earlier one of the key is.
-- The coordinate's check (every error of gnomon.read_snapshot) runs in each of these C functions (gnomon-c/src/read.c).
create or replace function gnomon.install_as_of_c(tt gnomon.tracked_table, helper name, live_cols text, hist_cols text)
returns text
language plpgsql as $$
declare
  hist text := format('gnomon_t.%I', tt.history_table);
  -- the coordinate's arguments after the text (constants of this table)
  c_args text := format('%L::xid8, %s', tt.track_xid::text, tt.table_id);
  n integer := cardinality(tt.key_columns);
  args text; conds text; live_keys text; hist_keys text; arms text;
  fallback name; keyed_live text; keyed_hist text; key_types text; key_pos text; keyed_keys text; key_cols text;
begin
  select string_agg(c->>'storetype', ', ' order by o), string_agg(format('x.%I = $%s', k, o), ' and ' order by o),
         string_agg(format('l.%I', k), ', ' order by o), string_agg(format('h.%I', k), ', ' order by o)
    into args, conds, live_keys, hist_keys
    from unnest(tt.key_columns) with ordinality u(k, o)
    join jsonb_array_elements(tt.columns) c on c->>'name' = k;
  -- no version of the key the coordinate cannot see with a version key below before_vid (a sub-select: never inlined)
  execute format($f$create function gnomon_t.%I(%s, before_vid bigint, coordinate text) returns boolean
    language sql stable as %L$f$, helper, args,
    format('select not exists (select 1 from %1$s x where %2$s and x.g_xid >= gnomon.read_xmin_c($%3$s, %5$s) '
           'and gnomon.xid_invisible_c($%3$s, %5$s, x.g_xid) and x.g_vid < $%4$s)', hist, conds, n + 2, n + 1, c_args));
  execute format('comment on function gnomon_t.%I(%s, bigint, text) is %L', helper, args,
                 format('Internal: whether a key of %I.%I has no version invisible in the snapshot below a version key (the C read path). Generated by gnomon.track().',
                        tt.schema_name, tt.table_name));
  -- (each function call in a generic plan's expressions costs its set-up at every execution: one C call per arm's
  -- filter, which calls the helper itself when needed; the helper is named by its text, which survives a dump)
  arms := format($b$
  select %1$s from %2$s l
   where %9$s gnomon.row_current_c(coordinate, %3$s, l.xmin, %4$L::regprocedure, %5$s)
  union all
  select %6$s from %7$s h
   where %10$s h.g_xid >= gnomon.read_xmin_c(coordinate, %3$s)
     and gnomon.first_invisible_c(coordinate, %3$s, h.g_xid, h.g_op, h.g_vid, %4$L::regprocedure, %8$s)
$b$, live_cols, format('%I.%I', tt.schema_name, tt.table_name), c_args, format('gnomon_t.%I(%s, bigint, text)', helper, args),
     live_keys, hist_cols, hist, hist_keys, '%LIVE%', '%HIST%');
  -- The point read: when the caller pins every key column (where k = $1), one arm, gnomon.as_of_key_c, which probes
  -- the live primary key itself and asks the fallback <base>_as_of_k (the two arms above, for one key) only when the
  -- live row is missing or its xmin is not visible in the coordinate; the planner keeps that arm or the other two, as
  -- gnomon.as_of_keyed_c folds (gnomon-c/src/read.c). Only for keys stored with their own type (the arms' key columns
  -- must be the same expression for the caller's condition in each of them).
  if gnomon.c_point_read_enabled()
     and not exists (select 1 from unnest(tt.key_columns) k join jsonb_array_elements(tt.columns) c on c->>'name' = k
                      where c->>'type' <> c->>'storetype') then
    fallback := gnomon.object_name(tt.base_name, '_as_of_k');
    select string_agg(format('l.%I = $%s', k, o), ' and ' order by o) || ' and ',
           string_agg(format('h.%I = $%s', k, o), ' and ' order by o) || ' and ',
           string_agg(c->>'type', ', ' order by o)
      into keyed_live, keyed_hist, key_types
      from unnest(tt.key_columns) with ordinality u(k, o)
      join jsonb_array_elements(tt.columns) c on c->>'name' = k;
    execute format('create function gnomon_t.%I(%s, coordinate text) returns setof %I.%I language sql stable as %L',
                   fallback, key_types, tt.schema_name, tt.table_name,
                   replace(replace(arms, '%LIVE%', keyed_live), '%HIST%', keyed_hist));
    execute format('comment on function gnomon_t.%I(%s, text) is %L', fallback, key_types,
                   format('Internal: the rows of a key of %I.%I as of a coordinate (the C read path''s point read, when the live row is not the answer). Generated by gnomon.track().',
                          tt.schema_name, tt.table_name));
    -- the key columns' numbers in the table, in the primary key's order (each twice: the number, then the value, which
    -- the planner puts in place of the second)
    select string_agg(format('%s, %s', c->>'attnum', c->>'attnum'), ', ' order by o), string_agg(format('k.%I', k), ', ' order by o)
      into key_pos, keyed_keys
      from unnest(tt.key_columns) with ordinality u(k, o)
      join jsonb_array_elements(tt.columns) c on c->>'name' = k;
    select string_agg(format('k.%I', c->>'name'), ', ' order by (c->>'attnum')::int) into key_cols
      from jsonb_array_elements(tt.columns) c;
    return format($b$
  select %1$s from gnomon.as_of_key_c(null::%2$s, coordinate, %3$s, %4$L::regprocedure, false, %5$s) k
   where gnomon.as_of_keyed_c(true, %6$s)
  union all%7$s$b$, key_cols, format('%I.%I', tt.schema_name, tt.table_name), c_args,
      format('gnomon_t.%I(%s, text)', fallback, key_types), key_pos, keyed_keys,
      replace(replace(arms, '%LIVE%', format('gnomon.as_of_keyed_c(false, %s) and', live_keys)),
              '%HIST%', format('gnomon.as_of_keyed_c(false, %s) and', hist_keys)));
  end if;
  return replace(replace(arms, '%LIVE%', ''), '%HIST%', '');
end $$;
comment on function gnomon.install_as_of_c(gnomon.tracked_table, name, text, text) is
  'Internal: the body of a tracked table''s as-of read on the C module''s read path, and its history helper.';

-- (Re)creates the as-of functions of a tracked table. Called by install_objects, and by gnomon.checkpoint() and
-- gnomon.drop_checkpoint(), because the table's checkpoints are written into the functions as constants: a table
-- without checkpoints reads with two plan branches and no catalog lookup at all.
create or replace function gnomon.install_as_of(p_table_id integer) returns void
language plpgsql as $$
declare
  tt gnomon.tracked_table;
  tab text; hist text; cpt text;
  live_cols text; hist_cols text; cp_cols text; keys_x text; x_eq_l text; x_eq_c text; x_cols text;
  cps record;
  cp_case text := ''; cp_snap_case text := '';
  resolve text; resolve_plain text; body text; body_c text;
  helper name; old_fn regprocedure;
begin
  select * into tt from gnomon.tracked_table where table_id = p_table_id;
  tab  := format('%I.%I', tt.schema_name, tt.table_name);
  hist := format('gnomon_t.%I', tt.history_table);
  cpt  := format('gnomon_t.%I', tt.checkpoint_table);
  select string_agg(format('l.%I', c->>'name'), ', ' order by (c->>'attnum')::int),
         string_agg(case when c->>'type' = c->>'storetype' then format('h.%I', c->>'name')
                         else format('h.%I::%s', c->>'name', c->>'type') end, ', ' order by (c->>'attnum')::int),
         string_agg(case when c->>'type' = c->>'storetype' then format('c.%I', c->>'name')
                         else format('c.%I::%s', c->>'name', c->>'type') end, ', ' order by (c->>'attnum')::int)
    into live_cols, hist_cols, cp_cols from jsonb_array_elements(tt.columns) c;
  select string_agg(format('x.%I', k), ', ' order by o),
         string_agg(format('x.%1$I = l.%1$I', k), ' and ' order by o),
         string_agg(format('x.%1$I = c.%1$I', k), ' and ' order by o)
    into keys_x, x_eq_l, x_eq_c from unnest(tt.key_columns) with ordinality u(k, o);
  select string_agg(format('x.%I', c->>'name'), ', ' order by (c->>'attnum')::int) into x_cols
    from jsonb_array_elements(tt.columns) c;

  -- The coordinate's snapshot, checked once per read by gnomon.read_snapshot() (inlined: its fast path, for a
  -- canonical coordinate of the current incarnation, later than the tracking and older than every transaction running
  -- now, calls no PL/pgSQL; gnomon.parse_coordinate() and gnomon.check_read() take anything else and raise the
  -- errors). It is computed in a materialised CTE of one node and one column, so that PostgreSQL evaluates it once and
  -- does not copy the expression into every reference: the read's arms take it through scalar sub-selects. A prepared
  -- read's generic plan starts every node and compiles every expression again at each execution, so nodes cost even
  -- when they return nothing (the CTE held the snapshot behind two OFFSET 0 subqueries before: three more nodes;
  -- docs/performance.md, "Past reads"). Tables with checkpoints keep one OFFSET 0 level, for the checkpoint columns.
  -- (%COORD% and %COORDFROM% are the coordinate and where it comes from: the text argument, or the timestamp's tick
  -- computed once behind OFFSET 0, so that read_snapshot, which names its argument several times, still inlines)
  resolve := format($r$
  with r as materialized (
    select v.snap, pg_snapshot_xmin(v.snap) as lo %%CP%%
      from (select gnomon.read_snapshot(%%COORD%%, %2$L::xid8, %1$s) as snap %%COORDFROM%% offset 0) v)$r$,
    tt.table_id, tt.track_xid::text);
  resolve_plain := format($r$
  with r as materialized (select gnomon.read_snapshot(%%COORD%%, %2$L::xid8, %1$s) as snap %%COORDFROM%%)$r$,
    tt.table_id, tt.track_xid::text);

  -- checkpoints, earliest first: a read rolls back from the first one that saw everything the coordinate saw
  for cps in select c.checkpoint_id, c.snapshot_xmin, c.snapshot from gnomon.checkpoint c
              where c.table_id = p_table_id order by c.snapshot_xmin, c.checkpoint_id loop
    cp_case := cp_case || format(' when pg_snapshot_xmax(v.snap) <= %L::xid8 then %s', cps.snapshot_xmin::text, cps.checkpoint_id);
    cp_snap_case := cp_snap_case || format(' when pg_snapshot_xmax(v.snap) <= %L::xid8 then %L::pg_snapshot', cps.snapshot_xmin::text, cps.snapshot::text);
  end loop;

  -- The C module's read path (gnomon.use_c_module(true) created its functions): see gnomon.install_as_of_c()
  helper := gnomon.object_name(tt.base_name, '_as_of_h');
  for old_fn in select p.oid::regprocedure from pg_proc p
                 where p.pronamespace = 'gnomon_t'::regnamespace
                   and p.proname in (helper, gnomon.object_name(tt.base_name, '_as_of_k')) loop
    execute format('drop function %s', old_fn);
  end loop;
  if cp_case = '' and gnomon.c_read_enabled() then
    body_c := gnomon.install_as_of_c(tt, helper, live_cols, hist_cols);
  end if;

  if cp_case = '' then
    -- live rows of keys with no version the coordinate cannot see, and for the other keys the image from before
    -- the first version it cannot see (none when that version is the key's insert)
    -- (the first condition has no column: a one-time filter that checks the coordinate even on an empty table)
    body := resolve_plain || format($b$
  select %1$s from %2$s l
   where (select r.snap from r) is not null
     and not exists (select 1 from %3$s x where %4$s and x.g_xid >= pg_snapshot_xmin((select r.snap from r))
                      and not pg_visible_in_snapshot(x.g_xid, (select r.snap from r)))
  union all
  select %5$s from (
    select distinct on (%6$s) x.g_op, %7$s
      from %3$s x
     where x.g_xid >= pg_snapshot_xmin((select r.snap from r))
       and not pg_visible_in_snapshot(x.g_xid, (select r.snap from r))
     order by %6$s, x.g_vid) h
   where h.g_op <> 'I'
$b$, live_cols, tab, hist, x_eq_l, hist_cols, keys_x, x_cols);
  else
    -- the same, rolling back from a checkpoint instead of the live table when the coordinate is older than one
    body := replace(resolve, '%CP%', format(', case %s end as cp, case %s end as cp_snap', cp_case, cp_snap_case)) || format($b$
  select %1$s from %2$s l
   where (select r.cp from r) is null
     and not exists (select 1 from %3$s x where %4$s and x.g_xid >= (select r.lo from r)
                      and not pg_visible_in_snapshot(x.g_xid, (select r.snap from r)))
  union all
  select %7$s from %8$s c
   where c.g_cp = (select r.cp from r)
     and not exists (select 1 from %3$s x where %9$s and x.g_xid >= (select r.lo from r)
                      and not pg_visible_in_snapshot(x.g_xid, (select r.snap from r))
                      and pg_visible_in_snapshot(x.g_xid, (select r.cp_snap from r)))
  union all
  select %5$s from (
    select distinct on (%6$s) x.*
      from %3$s x
     where x.g_xid >= (select r.lo from r)
       and not pg_visible_in_snapshot(x.g_xid, (select r.snap from r))
       and ((select r.cp from r) is null or pg_visible_in_snapshot(x.g_xid, (select r.cp_snap from r)))
     order by %6$s, x.g_vid) h
   where h.g_op <> 'I'
$b$, live_cols, tab, hist, x_eq_l, hist_cols, keys_x, cp_cols, cpt, x_eq_c);
  end if;
  execute format('create or replace function gnomon_t.%I(coordinate text) returns setof %s language sql stable as %L',
                 tt.as_of_function, tab, coalesce(body_c, replace(replace(body, '%COORD%', 'coordinate'), '%COORDFROM%', '')));
  execute format('create or replace function gnomon_t.%I(at timestamptz) returns setof %s language sql stable as %L',
                 tt.as_of_function, tab, replace(replace(body, '%COORD%', 't.c'), '%COORDFROM%',
                                                 'from (select gnomon.coordinate_at(at) as c offset 0) t'));
  execute format('comment on function gnomon_t.%I(text) is %L', tt.as_of_function,
                 format('Rows of %s as of a coordinate (from gnomon.coordinate()). Generated by gnomon.track().', tab));
  execute format('comment on function gnomon_t.%I(timestamptz) is %L', tt.as_of_function,
                 format('Rows of %s as of the last tick at or before a timestamp. Generated by gnomon.track().', tab));
end $$;

-- The write functions follow this file: regenerated for every tracked table whenever it changes (the version key
-- became the history's column default), and the key-change row triggers take the form gnomon.key_change_trigger_ddl
-- gives (AFTER UPDATE OF the key columns since).
do $$
declare
  t integer;
begin
  for t in select tt.table_id from gnomon.tracked_table tt order by tt.table_id loop
    perform gnomon.install_write_function(t);
    perform gnomon.refresh_key_change_trigger(t);
  end loop;
end $$;
