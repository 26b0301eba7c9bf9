// The chip caches' folders and files, trusted only as far as nobody but this
// user can write them. A chip dlopens a kernel library, and an OpenCL chip
// loads a program binary, found in its cache under a predictable name: a file
// another user could plant or swap there would run as this user's code.
//
// A cache folder is used only when it is a directory owned by this process's
// effective user that neither group nor others may write (a folder it
// creates is mode 0700); one that is not is refused, said once per process
// on stderr (the folder, its owner, its mode), and the per-user fallback used
// instead. A cached file is read only when it is a regular file (a link is
// not followed) owned by this user that neither group nor others may write,
// judged on the open file. Files are written through a temporary created
// O_CREAT | O_EXCL | O_NOFOLLOW (mkstemp) beside them and renamed into place.
//
// Trusts nothing about the folders and files it is given: every answer comes
// from the file system at the call. Does not decide what a cached file holds
// (library_builder.h checks a library's recorded size and hash). Thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace simpler::chip {

// The cache root the environment asks for: $SIMPLER_CACHE_DIR, else
// $XDG_CACHE_HOME/simpler, else $HOME/.cache/simpler, else
// $XDG_RUNTIME_DIR/simpler, else the per-user fallback_cache_dir(): never a
// name two users share.
std::string requested_cache_dir();

// /tmp/simpler-cache-<uid>: where a refused folder's files go instead.
std::string fallback_cache_dir();

// Why `folder` may not hold this user's cache, empty when it may: it does not
// exist or is no directory, another user owns it, or group or others may
// write it (the folder a symbolic link names is the one judged).
std::string folder_problem(const std::string& folder);

// `sub` (empty: the root itself) of the cache root `root`, ready for this
// user's files: created mode 0700 (with its missing parents) when absent, and
// returned when folder_problem() is empty for the root and for it. Else the
// refusal is written once per process to stderr, and the same `sub` of the
// fallback (or, when the fallback is refused too, of a folder made for this
// process alone by mkdtemp) is returned. Throws std::runtime_error when no
// private folder can be made at all.
std::string private_cache_folder(const std::string& root, const std::string& sub = {});

// Why the file at `path` may not be loaded, empty when it may: it does not
// exist, is a symbolic link or no regular file, another user owns it, or
// group or others may write it.
std::string file_problem(const std::string& path);

// The bytes of the file at `path` when file_problem() is empty for the file
// it opened (O_NOFOLLOW; the checks run on that open file); nullopt otherwise.
std::optional<std::string> read_private_file(const std::string& path);

// Writes `bytes` to `path` through a temporary made by mkstemp in its folder
// (mode 0600), renamed over `path` (a link planted there is replaced, never
// followed). Empty on success; else why (the step and the OS error), with no
// temporary left behind.
std::string write_private_file(const std::string& path, std::string_view bytes);

// A new folder inside `folder` made by mkdtemp (mode 0700, a name nobody can
// foresee) for one build's temporaries; throws std::runtime_error.
std::string make_private_temp_folder(const std::string& folder);

}  // namespace simpler::chip
