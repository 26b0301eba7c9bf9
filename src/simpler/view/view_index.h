// ViewIndex: the live views of one backing, so that finding the entries whose
// bytes may meet a probe's (stage 1 of the overlap question) is sub-linear in
// the number of live entries, for 1-D ranges and for 2-D tiles of a matrix.
//
// Every view is in exactly one of two structures: the 2-D tiles of one row
// pitch in a TileIndex (by rows x columns), every other view in a RegionIndex
// (by byte range). A lookup asks both: the RegionIndex by the probe's byte
// range, the TileIndex by rows and columns when the probe is a tile of its
// pitch and by byte range otherwise. So an entry that may share a byte with the
// probe is always visited, an entry of another tile of the same pitch is
// visited only when its rows and columns meet the probe's, and overlap()
// decides about every visited entry.
//
// Nodes come from the memory resource given at construction. Does not own what
// the ids name and does not dedupe: an id is erased with the box it was
// inserted with. Trusts its caller for that; any ViewBox is accepted (an empty
// byte range is never filed and never meets anything).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory_resource>

#include "simpler/view/region_index.h"
#include "simpler/view/tile_index.h"
#include "simpler/view/view_box.h"

namespace simpler {

class ViewIndex {
public:
    using Item = RegionIndex::Item;

    explicit ViewIndex(std::pmr::memory_resource* memory = std::pmr::get_default_resource())
        : ranges_(memory), tiles_(memory) {}

    void insert(uint32_t id, const ViewBox& box) {
        if (!tiles_.insert(id, box)) ranges_.insert(id, box.begin, box.end);
    }
    // Removes the entry filed for (id, box); false when there is none. The
    // tiles' pitch may have changed since the insert, so both are asked.
    bool erase(uint32_t id, const ViewBox& box) {
        return tiles_.erase(id, box) || ranges_.erase(id, box.begin, box.end);
    }

    // Calls f(const Item&) once for every filed entry that may share a byte
    // with probe, and perhaps for others whose byte ranges meet the probe's.
    // f must not modify the index.
    template <class F>
    void for_each_candidate(const ViewBox& probe, F&& f) const {
        ranges_.for_each_overlapping(probe.begin, probe.end, f);
        tiles_.for_each_meeting(probe, f);
    }

    [[nodiscard]] size_t size() const noexcept { return ranges_.size() + tiles_.size(); }
    [[nodiscard]] bool empty() const noexcept { return ranges_.empty() && tiles_.empty(); }
    [[nodiscard]] const RegionIndex& ranges() const noexcept { return ranges_; }
    [[nodiscard]] const TileIndex& tiles() const noexcept { return tiles_; }

private:
    RegionIndex ranges_;
    TileIndex tiles_;
};

}  // namespace simpler
