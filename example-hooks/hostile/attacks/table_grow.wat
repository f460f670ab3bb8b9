;; Table growth: a hand-written hook (stable Rust cannot emit `table.grow`),
;; the core module of a component for the `hookrt:hook@0.1.0` world
;; `define-hook`. tests/all/attacks.rs turns it into a component with
;; wit-component (`table_growth_stops_at_table_elements_and_the_host_keeps_serving`).
;;
;; On `session.started` it grows its table one element at a time until
;; `table.grow` answers -1, and returns the error "N elements, then refused"
;; with N the table's size: the limit it met. On `turn.started` it asks for
;; 100,000,000 elements at once (and traps if that is granted): Wasmtime
;; charges fuel per element asked for before it grows, so the delivery ends
;; out of fuel before the limit is even asked.
(module
  (memory (export "memory") 1)
  (table $t 1 funcref)
  (global $heap (mut i32) (i32.const 4096))

  ;; subscriptions: list<string> = ["session.started", "turn.started"];
  ;; results by pointer: at 32 the list (pointer 64, length 2), at 64 the
  ;; strings (128, 15) and (144, 12).
  (data (i32.const 32) "\40\00\00\00\02\00\00\00")
  (data (i32.const 64) "\80\00\00\00\0f\00\00\00\90\00\00\00\0c\00\00\00")
  (data (i32.const 128) "session.started")
  (data (i32.const 144) "turn.started")
  ;; The message's fixed end, written after the digits.
  (data (i32.const 1024) " elements, then refused")

  (func (export "subscriptions") (result i32)
    i32.const 32)

  ;; handle(envelope, context) -> result<_, string>: the parameters come by
  ;; pointer (they flatten to more than 16 values); the envelope's `kind` is
  ;; the string at offset 12 (after `schema-version` and `id`). The result
  ;; goes at 256: tag 1 (err), then the string's pointer and length.
  (func (export "handle") (param $args i32) (result i32)
    (local $start i32)
    ;; `turn.started`: one huge step.
    (if (i32.eq (i32.load8_u (i32.load offset=12 (local.get $args))) (i32.const 116))
      (then
        (if (i32.ne (table.grow $t (ref.null func) (i32.const 100000000)) (i32.const -1))
          (then unreachable))))
    ;; One element at a time, up to the limit.
    (block $refused
      (loop $grow
        (br_if $refused
          (i32.eq (table.grow $t (ref.null func) (i32.const 1)) (i32.const -1)))
        (br $grow)))
    (local.set $start (call $digits (table.size $t) (i32.const 1024)))
    (i32.store8 (i32.const 256) (i32.const 1))
    (i32.store (i32.const 260) (local.get $start))
    (i32.store (i32.const 264) (i32.sub (i32.const 1047) (local.get $start)))
    i32.const 256)

  ;; Writes `n` in decimal ending just before `end`; returns where it starts.
  (func $digits (param $n i32) (param $end i32) (result i32)
    (loop $next
      (local.set $end (i32.sub (local.get $end) (i32.const 1)))
      (i32.store8 (local.get $end)
        (i32.add (i32.rem_u (local.get $n) (i32.const 10)) (i32.const 48)))
      (local.set $n (i32.div_u (local.get $n) (i32.const 10)))
      (br_if $next (local.get $n)))
    local.get $end)

  ;; The canonical ABI's allocator, for the host's copy of the parameters:
  ;; a bump allocator over fresh memory (every delivery is a fresh instance).
  (func (export "cabi_realloc")
    (param $old i32) (param $old_size i32) (param $align i32) (param $size i32)
    (result i32)
    (local $p i32)
    (local.set $p
      (i32.and
        (i32.add (global.get $heap) (i32.sub (local.get $align) (i32.const 1)))
        (i32.sub (i32.const 0) (local.get $align))))
    (global.set $heap (i32.add (local.get $p) (local.get $size)))
    (if (i32.gt_u (global.get $heap) (i32.shl (memory.size) (i32.const 16)))
      (then
        (if (i32.eq
              (memory.grow
                (i32.shr_u
                  (i32.add
                    (i32.sub (global.get $heap) (i32.shl (memory.size) (i32.const 16)))
                    (i32.const 65535))
                  (i32.const 16)))
              (i32.const -1))
          (then unreachable))))
    local.get $p)
)
