// The split view's rules (Kerbl 2012 Fig 8, §6.3): two Sessions on the same scene, resolution,
// camera, seed and target spp, each with its own strategy and priority, compared at the same sample
// budget. The viewer (app/gui/viewer.cpp) drives them; these pure functions are its testable part.
//
// Equal budget: each frame the left session renders its own frame budget (paths/frame, or auto: about
// the frame budget in ms of work), then the right session renders the paths that bring its total up to
// the left's (split_follower_budget). So after every frame both films hold the same number of paths,
// up to the last step's overshoot (a strategy runs whole tasks: at least one task, and the GPU ones a
// grid's worth). A faster strategy does not get more samples; it finishes its share sooner.
//
// Scheduling settings in split view: strategy and priority are each side's own (the comparison); wave
// size, block size and the megakernel's settings are the same on both sides (a fair comparison): the
// right session starts with the left's, and the viewer applies every later change to both.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "render/pathtracer/priority.h"

namespace mv {

class MegakernelControl;
class Session;

/// What `--split STRATEGY[:PRIORITY]` asks for: the right side's strategy and priority.
struct SplitSpec {
  std::string strategy;      ///< a name of patch_strategies()
  std::string priority;      ///< a priority name; empty: default_right_priority of the left side's
};

/// Parses "STRATEGY[:PRIORITY]". Throws InputError("--split", text, ...) naming the allowed strategies or
/// priorities when one is unknown. (Whether a GPU strategy can run is the Session's to say.)
SplitSpec parse_split_spec(const std::string& text);

/// The right side's priority when none is given: variance next to a left side without priority (none),
/// else none: the comparison of Kerbl Fig 8 (uniform vs adaptive sampling).
PriorityFunction default_right_priority(PriorityFunction left);

/// Paths the right (following) session renders this frame: what brings its total up to the left's,
/// 0 when it is level or ahead (then it does not step this frame: a step runs at least one task).
uint64_t split_follower_budget(uint64_t left_total_paths, uint64_t right_total_paths);

/// The first film column shown from the right session for a divider at `divider` (fraction of the
/// film's width, clamped to [0, 1]; NaN counts as 0.5): round(divider × width), in [0, width].
int split_column(float divider, int width);

/// One side (a column) of the viewer's Megakernel panel.
struct MegakernelPanelSide {
  bool right = false;          ///< the split view's right session; false: the left (or only) one
  std::string title;           ///< "left <strategy>/<priority>", "right …"; empty in the single view
  const MegakernelControl* megakernel = nullptr;  ///< its statistics; null: the side runs another strategy
};

/// Which sides the Megakernel panel lists, from each side's "<strategy>/<priority>" and megakernel (null:
/// another strategy is active); `split`: the right side exists (else its arguments are ignored).
/// Single view: the session while it runs the megakernel, else nothing (the panel is hidden). Split view:
/// both sides, left then right, as soon as either runs the megakernel (a side that does not is listed
/// with megakernel null: the panel says so), else nothing.
std::vector<MegakernelPanelSide> megakernel_panel_sides(const std::string& left_scheduling,
                                                        const MegakernelControl* left, bool split,
                                                        const std::string& right_scheduling,
                                                        const MegakernelControl* right);
/// The same for the viewer's sessions (`right` null: the single view).
std::vector<MegakernelPanelSide> megakernel_panel_sides(const Session& left, const Session* right);

/// "<strategy>/<priority>" of `s`, as the split view's panels and logs name a side.
std::string scheduling_name(const Session& s);

}  // namespace mv
