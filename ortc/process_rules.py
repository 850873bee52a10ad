"""How each ortc type behaves under pickle and fork(), with the tests that show it.

Rendered into docs/THREAD_RULES.md (section "Pickle and fork") by :mod:`ortc.rules`, and into
its JSON as ``pickle_and_fork``. Kept apart from the per-type thread records: these are facts
about processes, not threads.
"""

from __future__ import annotations

__all__ = ["PICKLE_AND_FORK", "markdown_lines"]

_R = "tests/test_recipe.py::"
_P = "tests/test_process_pools.py::"
_S = "tests/test_shared_sessions.py::"

#: one row per type: what pickling does, what using it in a forked child does, evidence
PICKLE_AND_FORK: tuple[dict[str, object], ...] = (
    {"type": "Session", "pickle": "as its recipe (model bytes once per pickle, out of band "
     "under protocol 5, or the path; the model's content digest; every option; providers); "
     "unpickling builds nothing: the session is built on its first use, whatever thread comes "
     "first, over the one ORT session the process keeps per model content and options "
     "(weakly: the last user lets it go, but the last one let go stays idle until another "
     "recipe's takes its place or ortc.batch.forget()); a model file that no longer has the recipe's "
     "digest is refused (RecipeError)",
     "fork": "rebuilt from its recipe on first use in the child, once per child whichever "
     "thread comes first (a lock made fresh in the child); the parent's OrtSession is never "
     "called or released there (ORT's thread pools did not survive the fork); a model file "
     "changed since the parent read it is refused (RecipeError), not rebuilt",
     "evidence": [_R + "test_from_recipe_builds_an_equal_session",
                  _R + "test_the_model_bytes_travel_once_per_pickle",
                  _R + "test_path_recipe_is_absolute_and_names_the_files_content",
                  _S + "test_an_unpickled_session_is_built_on_first_use_not_when_unpickled",
                  _S + "test_unpickled_sessions_of_one_recipe_share_one_ort_session_weakly",
                  _S + "test_two_threads_first_using_one_unpickled_session_build_it_once",
                  _S + "test_a_replaced_model_file_is_refused_not_used",
                  _S + "test_model_bytes_go_out_of_band_with_protocol_5",
                  _S + "test_a_forked_child_builds_its_own_once_for_all_unpickled_sessions",
                  _P + "test_fork_rebuilds_once_per_child_under_concurrent_first_use",
                  _P + "test_multiprocessing_pool_runs_the_module_level_session",
                  _P + "test_process_pool_executor_with_a_pickled_session",
                  _P + "test_a_pool_initializer_ships_the_session_once_per_worker",
                  _P + "test_a_session_shipped_with_every_task_is_built_once_per_worker",
                  _S + "test_the_last_released_shared_session_is_kept_idle_one_at_most",
                  _S + "test_threads_letting_sessions_go_at_once_leave_one_idle",
                  _S + "test_a_forked_child_starts_without_the_idle_session",
                  _P + "test_rebuild_failure_in_the_child_names_the_missing_file",
                  _P + "test_a_child_refuses_to_rebuild_from_a_model_file_that_changed"]},
    {"type": "SessionRecipe", "pickle": "plain frozen data (the model bytes out of band under "
     "protocol 5); unpickling checks every field's type and the format version, and calls "
     "nothing but ortc's own builders; a process that holds bytes of the same digest keeps "
     "those",
     "fork": "plain Python data: usable anywhere, immutable (Send and Sync)",
     "evidence": [_R + "test_unpickling_calls_only_ortc_builders_and_numpy",
                  _R + "test_malformed_state_is_refused_before_anything_is_built",
                  _R + "test_a_newer_format_is_refused",
                  _R + "test_bytes_recipe_holds_the_callers_bytes_by_reference",
                  _S + "test_a_recipe_names_its_models_content"]},
    {"type": "SessionOptions", "pickle": "by value: every setting replayed on new options",
     "fork": "ForkedHandleError",
     "evidence": [_R + "test_every_kind_of_option_is_recorded_and_replayed",
                  _P + "test_other_inherited_handles_still_raise_in_the_child"]},
    {"type": "RunOptions", "pickle": "by value: tag, log levels, config entries (not the "
     "terminate flag, a run state); refused while it holds LoRA adapters",
     "fork": "ForkedHandleError",
     "evidence": [_R + "test_run_options_pickle_by_value",
                  _P + "test_other_inherited_handles_still_raise_in_the_child"]},
    {"type": "Value", "pickle": "a tensor as its array, a sequence or map as its parts, "
     "element types exact; an empty optional or a sparse tensor is refused (TypeError)",
     "fork": "ForkedHandleError (a numpy array over its memory stays readable: plain memory)",
     "evidence": [_R + "test_tensor_values_pickle_as_their_array",
                  _R + "test_sequence_and_map_values_pickle_with_exact_types",
                  _R + "test_empty_optional_value_is_refused",
                  _P + "test_other_inherited_handles_still_raise_in_the_child"]},
    {"type": "IoBinding, Allocator, MemoryInfo, Env (every other handle type)",
     "pickle": "TypeError naming the class and the reason (ORT objects of this process)",
     "fork": "ForkedHandleError, except the process-wide Env, which the child keeps",
     "evidence": [_R + "test_unpicklable_handles_name_their_class_and_reason",
                  _P + "test_other_inherited_handles_still_raise_in_the_child"]},
    {"type": "any closed handle", "pickle": "TypeError: cannot pickle a closed ortc.<class>",
     "fork": "ClosedError",
     "evidence": [_R + "test_unpicklable_handles_name_their_class_and_reason",
                  _P + "test_other_inherited_handles_still_raise_in_the_child"]},
)


def markdown_lines() -> list[str]:
    """The "Pickle and fork" section of docs/THREAD_RULES.md."""
    lines = ["## Pickle and fork", "",
             "A Session made before `fork()` works in the child: it is rebuilt there from its "
             "recipe (`Session.recipe()`), which holds the model and every option as immutable "
             "plain data. Other handles are tied to the ORT objects of the process that made "
             "them.", "",
             "| type | pickle | in a forked child | evidence |", "|---|---|---|---|"]
    for row in PICKLE_AND_FORK:
        evidence = "<br>".join(f"`{e}`" for e in row["evidence"])  # type: ignore[attr-defined]
        lines.append(f"| {row['type']} | {row['pickle']} | {row['fork']} | {evidence} |")
    return lines + [""]
