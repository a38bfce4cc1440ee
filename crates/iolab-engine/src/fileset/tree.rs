//! The directory tree of a fileset, decided without I/O by replaying filebench's
//! `fileset_populate_subdir` (fileset.c) with a seeded generator.
//!
//! filebench's recursion, which this follows:
//! * the root (`path/name`, depth 1) is never a leaf and keeps adding subdirectories
//!   `00000001, 00000002, …` until every file has a place;
//! * every other directory draws a depth `randepth` (gamma of shape `dirgamma/1000` and mean
//!   `ln(entries+leafdirs)/ln(dirwidth)`, truncated to an integer, 0 → 1; fixed when
//!   `dirgamma` is 0; or the `dirdepthrv` variable) and a width `ranwidth` (gamma of the same
//!   shape and mean `dirwidth`, 0 → 1; fixed when `dirgamma` is 0);
//! * a directory whose depth is ≥ its `randepth` is a leaf and holds up to `⌈ranwidth⌉` files
//!   named `%08d` from 1, otherwise up to `⌈ranwidth⌉` subdirectories, recursively;
//! * then the same loop again for leaf directories.
//!
//! Deliberate differences are listed on [`super::Fileset::layout`].

use iolab_util::rng::Rng;
use iolab_workload::rv::Rv;

use super::FilesetError;

/// Deepest directory level (the root is level 1). 256 levels of `/%08d` are 2.3 KiB, well
/// below Linux's 4 KiB `PATH_MAX`; a gamma depth of shape 1.5 exceeds 8× its mean with
/// probability < 10⁻⁴, so the cap only trims freak draws.
pub const MAX_DEPTH: u32 = 256;

/// "No parent": the root directory's parent.
pub(super) const NO_PARENT: u32 = u32::MAX;

/// One directory of the tree. Files of a leaf directory are consecutive entry ids (the
/// recursion makes them in one loop), so their serials need not be stored per entry:
/// serial = id − `first_file` + 1, and likewise for leaf directories after the files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct DirRec {
    pub parent: u32,
    pub serial: u32,
    pub depth: u32,
    pub first_file: u32,
    pub first_leafdir: u32,
    /// Serial of this directory's last file (leaf directories are numbered after it).
    pub leaf_serial_base: u32,
}

/// The shape of a fileset's tree: directories, and the directory of each file and leaf dir.
pub(super) struct Tree {
    pub dirs: Vec<DirRec>,
    pub file_dir: Vec<u32>,
    pub leaf_dir: Vec<u32>,
    pub mean_depth: f64,
    pub mean_width: f64,
}

struct Frame {
    dir: u32,
    depth: u32,
    leaf: bool,
    /// How many children each loop may add; `u64::MAX` for the root and for `dirwidth` 0.
    width: u64,
    second_loop: bool,
    /// Children added so far by the current loop.
    done: u64,
    /// Children added by the first loop (leaf-directory serials continue after them).
    first_loop: u64,
}

/// Builds the tree of `entries` files and `leafdirs` leaf directories.
pub(super) fn build(
    entries: u32,
    leafdirs: u32,
    dirwidth: &Rv,
    dirgamma: u32,
    dirdepth: Option<&Rv>,
    rng: &mut Rng,
) -> Result<Tree, FilesetError> {
    // A random width (fileset.c: `AVD_IS_RANDOM`, i.e. a randvar) is drawn per directory and
    // its mean, truncated, sets the mean depth. filebench reads any other value once, so a
    // cvar gives one draw that then acts as a constant.
    let (width_rv, dirwidth) = match dirwidth {
        Rv::Const(w) => (None, *w),
        rv @ (Rv::Uniform { .. } | Rv::Gamma { .. } | Rv::Tabular { .. }) => {
            (Some(rv.clone()), rv.mean().max(0.0) as u64)
        }
        other => (None, other.sample(rng)),
    };
    let total = f64::from(entries) + f64::from(leafdirs);
    let (mean_width, mut mean_depth) = if dirwidth == 0 && width_rv.is_none() {
        (f64::INFINITY, 1.0)
    } else {
        let w = dirwidth as f64;
        (w, total.ln() / w.ln())
    };
    if !mean_depth.is_finite() {
        mean_depth = 1.0;
    }
    let shape = f64::from(dirgamma) / 1000.0;
    // filebench overwrites the depth variable's mean with the computed mean depth
    // (fileset_populate: `rnd_dbl_mean = fs_meandepth`), so only its shape counts. That
    // holds for uniform and gamma randvars; other kinds keep their own parameters.
    let depth_rv = dirdepth.map(|rv| match rv {
        Rv::Uniform { min, round, .. } => Rv::Uniform {
            min: *min,
            mean: mean_depth,
            round: *round,
        },
        Rv::Gamma {
            min, gamma, round, ..
        } => Rv::Gamma {
            min: *min,
            mean: mean_depth,
            gamma: *gamma,
            round: *round,
        },
        other => other.clone(),
    });

    let mut b = Builder {
        rng,
        shape,
        width_rv,
        mean_width,
        mean_depth,
        depth_rv,
        dirs: Vec::new(),
        file_dir: Vec::with_capacity(entries as usize),
        leaf_dir: Vec::with_capacity(leafdirs as usize),
    };
    b.run(entries, leafdirs)?;
    b.dirs.shrink_to_fit();
    Ok(Tree {
        dirs: b.dirs,
        file_dir: b.file_dir,
        leaf_dir: b.leaf_dir,
        mean_depth,
        mean_width,
    })
}

struct Builder<'a> {
    rng: &'a mut Rng,
    shape: f64,
    /// A random `dirwidth`, drawn per directory instead of the gamma around `mean_width`.
    width_rv: Option<Rv>,
    mean_width: f64,
    mean_depth: f64,
    depth_rv: Option<Rv>,
    dirs: Vec<DirRec>,
    file_dir: Vec<u32>,
    leaf_dir: Vec<u32>,
}

impl Builder<'_> {
    /// The recursion of `fileset_populate_subdir`, with an explicit stack.
    fn run(&mut self, entries: u32, leafdirs: u32) -> Result<(), FilesetError> {
        let entries = entries as usize;
        let leafdirs = leafdirs as usize;
        let mut stack = vec![self.new_dir(NO_PARENT, 1, 1)?];
        while let Some(top) = stack.last_mut() {
            let (made, want) = if top.second_loop {
                (self.leaf_dir.len(), leafdirs)
            } else {
                (self.file_dir.len(), entries)
            };
            if top.done < top.width && made < want {
                if top.leaf {
                    // A leaf's loop only adds entries: do it in one go.
                    let n = (top.width - top.done).min((want - made) as u64) as usize;
                    let dir = top.dir;
                    let rec = &mut self.dirs[dir as usize];
                    if top.second_loop {
                        if top.done == 0 {
                            rec.first_leafdir = made as u32;
                        }
                        self.leaf_dir.extend(std::iter::repeat_n(dir, n));
                    } else {
                        if top.done == 0 {
                            rec.first_file = made as u32;
                        }
                        self.file_dir.extend(std::iter::repeat_n(dir, n));
                    }
                    top.done += n as u64;
                } else {
                    top.done += 1;
                    let serial = top.first_loop + top.done;
                    let (dir, depth) = (top.dir, top.depth + 1);
                    let serial = u32::try_from(serial).map_err(|_| too_many_dirs())?;
                    let frame = self.new_dir(dir, serial, depth)?;
                    stack.push(frame);
                }
            } else if !top.second_loop {
                top.second_loop = true;
                top.first_loop = top.done;
                top.done = 0;
                if top.leaf {
                    self.dirs[top.dir as usize].leaf_serial_base = top.first_loop as u32;
                }
            } else {
                stack.pop();
            }
        }
        Ok(())
    }

    fn new_dir(&mut self, parent: u32, serial: u32, depth: u32) -> Result<Frame, FilesetError> {
        let id = u32::try_from(self.dirs.len())
            .ok()
            .filter(|&id| id != NO_PARENT)
            .ok_or_else(too_many_dirs)?;
        // Same draw order as filebench: depth, then width.
        let randepth = self.draw_depth();
        let width = self.draw_width();
        self.dirs.push(DirRec {
            parent,
            serial,
            depth,
            first_file: 0,
            first_leafdir: 0,
            leaf_serial_base: 0,
        });
        let root = parent == NO_PARENT;
        Ok(Frame {
            dir: id,
            depth,
            leaf: !root && depth >= randepth,
            width: if root { u64::MAX } else { width },
            second_loop: false,
            done: 0,
            first_loop: 0,
        })
    }

    fn draw_depth(&mut self) -> u32 {
        let d = if let Some(rv) = &self.depth_rv {
            rv.sample(self.rng) as f64
        } else if self.shape > 0.0 {
            gamma(self.rng, self.shape, self.mean_depth / self.shape)
        } else {
            self.mean_depth
        };
        // `(int)` in filebench: truncation; then 0 → 1.
        (d as u32).clamp(1, MAX_DEPTH)
    }

    /// The number of children a non-root directory may have: filebench loops
    /// `for (i = 1; i < ranwidth + 1; i++)`, i.e. ⌈ranwidth⌉ times.
    fn draw_width(&mut self) -> u64 {
        let w = if let Some(rv) = &self.width_rv {
            rv.sample_f64(self.rng)
        } else if self.mean_width.is_infinite() {
            return u64::MAX;
        } else if self.shape > 0.0 {
            gamma(self.rng, self.shape, self.mean_width / self.shape)
        } else {
            self.mean_width
        };
        if w <= 0.0 {
            1
        } else {
            w.ceil() as u64
        }
    }
}

fn too_many_dirs() -> FilesetError {
    FilesetError::TooLarge {
        what: "directories",
        count: u64::from(u32::MAX),
    }
}

/// A gamma variate of shape `k` and scale `scale` (mean `k·scale`), unrounded: the tree needs
/// the raw value (the width is ⌈x⌉, an `Rv` would truncate). The sampler is the random
/// variables' own ([`iolab_workload::rv::gamma_unit`], Marsaglia & Tsang 2000).
pub(super) fn gamma(rng: &mut Rng, k: f64, scale: f64) -> f64 {
    if !scale.is_finite() {
        return 0.0;
    }
    iolab_workload::rv::gamma_unit(rng, k) * scale
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gamma_has_the_requested_mean() {
        let mut rng = Rng::new(5);
        for (k, scale) in [(1.5, 10.0 / 1.5), (0.5, 4.0), (3.0, 2.0)] {
            let n = 200_000;
            let mean = (0..n).map(|_| gamma(&mut rng, k, scale)).sum::<f64>() / n as f64;
            let want = k * scale;
            assert!((mean - want).abs() < 0.02 * want, "k={k}: {mean} vs {want}");
        }
    }

    #[test]
    fn gamma_of_a_bad_shape_is_zero() {
        let mut rng = Rng::new(1);
        assert_eq!(gamma(&mut rng, 0.0, 1.0), 0.0);
        assert_eq!(gamma(&mut rng, f64::NAN, 1.0), 0.0);
    }
}
