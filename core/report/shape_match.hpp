// Rows of several runs' reports put side by side (`compare`, `history`) are matched by shape id.
// The same id with other parameters or another timing in another run (a grid edited in place: a
// size fixed, a dtype changed) is a different problem, and drawing it as one row would show its
// change as the kernel's. So such a shape gets a row per version, and a note names them.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "report/report.hpp"

namespace abh {

class ShapeMatch {
 public:
  struct Place {
    std::size_t row;  // the row `row` of a run belongs to, counted from 0 in first-seen order
    bool fresh;       // it starts that row
  };
  // Where `row` of run number `run` goes among the rows seen so far.
  Place place(const ShapeRow& row, std::size_t run);
  // One sentence per shape id seen with more than one set of parameters or timings, naming the
  // runs by `labels` (one per run number).
  std::vector<std::string> notes(const std::vector<std::string>& labels) const;

 private:
  struct Version {
    std::string params;  // the parameters as compact JSON, and the timing when one is recorded
    std::size_t first_run;
  };
  std::map<std::string, std::size_t> rows_;               // id and version -> row
  std::map<std::string, std::vector<Version>> versions_;  // id -> its versions, first seen first
  std::vector<std::string> ids_in_order_;                 // ids, first seen first
};

}  // namespace abh
