"""The demo's text items: transport knowledge and calculations whose numbers are worked out in full.

Every explanation records the formula, the inputs and the result, as the paper's audit rule asks,
and each distractor comes from one named mistake (a dropped term, a unit slip, a wrong formula).
"""

from __future__ import annotations

from roadeval.benchmarks.trip.demo_spec import DemoSpec

_MEMORY = "knowledge memory"
_LOGIC = "logical reasoning"
_NUMERIC = "numerical calculation"

VEHICLE_ITEMS: tuple[DemoSpec, ...] = (
    DemoSpec(
        "vehicle",
        "driving safety",
        "stopping distance",
        _NUMERIC,
        "medium",
        "A car travels at 72 km/h. The driver's reaction time is 1.5 s and the car brakes at a "
        "constant 5 m/s^2. What is the total stopping distance?",
        "70 m",
        ("40 m", "60 m", "90 m"),
        "v = 72/3.6 = 20 m/s; reaction 20 x 1.5 = 30 m; braking 20^2/(2 x 5) = 40 m; total 70 m. "
        "40 m omits the reaction distance; 60 m uses 1.0 s; 90 m uses 2.5 s.",
    ),
    DemoSpec(
        "vehicle",
        "driving safety",
        "following distance",
        _NUMERIC,
        "easy",
        "Keeping a two-second time gap at 90 km/h, how far behind the lead vehicle should a "
        "driver stay?",
        "50 m",
        ("25 m", "45 m", "180 m"),
        "90 km/h = 25 m/s; 25 x 2 = 50 m. 180 m multiplies km/h by seconds; 25 m uses one second.",
    ),
    DemoSpec(
        "vehicle",
        "collision avoidance",
        "time to collision",
        _NUMERIC,
        "medium",
        "A following car at 25 m/s is 30 m behind a lead car at 15 m/s; both keep their speeds. "
        "What is the time to collision?",
        "3.0 s",
        ("1.2 s", "2.0 s", "0.8 s"),
        "TTC = gap / closing speed = 30 / (25 - 15) = 3.0 s. 1.2 s divides by the follower's "
        "speed, 2.0 s by the leader's, 0.8 s by the sum of the speeds.",
    ),
    DemoSpec(
        "vehicle",
        "vehicle perception",
        "lidar time of flight",
        _NUMERIC,
        "easy",
        "A lidar pulse returns 400 ns after it was emitted. Taking c = 3 x 10^8 m/s, how far "
        "away is the target?",
        "60 m",
        ("120 m", "30 m", "90 m"),
        "Range = c t / 2 = 3e8 x 400e-9 / 2 = 60 m. 120 m forgets that the pulse travels out and "
        "back.",
    ),
    DemoSpec(
        "vehicle",
        "vehicle dynamics",
        "anti-lock braking",
        _MEMORY,
        "easy",
        "What is the main safety benefit of an anti-lock braking system (ABS) in an emergency "
        "stop?",
        "Steering control is kept while braking",
        (
            "Stopping distance is always shorter",
            "Brake pads wear out much more slowly",
            "Wheels lock sooner for more grip",
        ),
        "ABS keeps the wheels from locking, so the tyres still generate lateral force and the "
        "driver can steer; it does not always shorten the stopping distance (e.g. on loose "
        "gravel).",
    ),
    DemoSpec(
        "vehicle",
        "traffic regulations",
        "all-way stop right of way",
        _LOGIC,
        "medium",
        "At an all-way stop, two vehicles stop at the same moment: one arrives from the south "
        "heading north, one from the west heading east. Under the yield-to-the-right rule, which "
        "vehicle proceeds first?",
        "The vehicle from the south",
        ("The vehicle from the west", "Whichever vehicle is larger", "Both may enter together"),
        "The driver from the west (heading east) has the northbound vehicle on its right, so it "
        "yields; the vehicle from the south has no vehicle on its right and goes first.",
    ),
)

TRAFFIC_MANAGEMENT_ITEMS: tuple[DemoSpec, ...] = (
    DemoSpec(
        "traffic management",
        "signal control",
        "Webster optimal cycle",
        _NUMERIC,
        "medium",
        "An intersection has total lost time L = 12 s per cycle and a sum of critical flow ratios "
        "Y = 0.6. What is Webster's optimal cycle length?",
        "57.5 s",
        ("45.0 s", "42.5 s", "38.3 s"),
        "C0 = (1.5 L + 5) / (1 - Y) = (18 + 5) / 0.4 = 57.5 s. 45.0 s drops the 5 s term; 42.5 s "
        "uses L instead of 1.5 L; 38.3 s divides by Y instead of 1 - Y.",
    ),
    DemoSpec(
        "traffic management",
        "signal control",
        "green split",
        _NUMERIC,
        "medium",
        "A two-phase signal has a 90 s cycle, 10 s of lost time, and critical flow ratios 0.3 "
        "(phase 1) and 0.2 (phase 2). What effective green does phase 1 get when green is split "
        "in proportion to the flow ratios?",
        "48 s",
        ("54 s", "32 s", "40 s"),
        "Effective green 90 - 10 = 80 s; phase 1: 80 x 0.3 / 0.5 = 48 s. 54 s splits the whole "
        "cycle; 32 s is phase 2's share; 40 s splits equally.",
    ),
    DemoSpec(
        "traffic management",
        "signal control",
        "volume to capacity ratio",
        _NUMERIC,
        "medium",
        "A lane group has a saturation flow of 1800 veh/h, 30 s of effective green in a 90 s "
        "cycle, and a demand of 480 veh/h. What is its volume-to-capacity ratio?",
        "0.80",
        ("0.27", "1.25", "0.53"),
        "c = s g / C = 1800 x 30 / 90 = 600 veh/h; v/c = 480 / 600 = 0.80. 0.27 divides by the "
        "saturation flow; 1.25 inverts the ratio; 0.53 takes c = 900 veh/h.",
    ),
    DemoSpec(
        "traffic management",
        "signal control",
        "yellow change interval",
        _NUMERIC,
        "medium",
        "Approach speed 50 km/h on a level approach, perception-reaction time 1.0 s, comfortable "
        "deceleration 3.05 m/s^2. Using the kinematic formula, how long should the yellow "
        "interval be (to 0.1 s)?",
        "3.3 s",
        ("2.3 s", "5.6 s", "4.3 s"),
        "Y = t + v / (2a) = 1.0 + 13.89 / 6.10 = 3.3 s. 2.3 s omits the reaction time; 5.6 s "
        "uses v / a without the factor 2; 4.3 s takes a 2.0 s reaction time.",
    ),
    DemoSpec(
        "traffic management",
        "signal control",
        "all-red clearance interval",
        _MEMORY,
        "easy",
        "What is the main purpose of the all-red interval at a signalized intersection?",
        "Let vehicles clear the intersection",
        (
            "Give pedestrians extra crossing time",
            "Reduce fuel use of waiting traffic",
            "Warn that the green is about to end",
        ),
        "The red clearance interval lets vehicles that entered on yellow leave the conflict area "
        "before conflicting traffic gets green; warning of the end of green is the yellow's job.",
    ),
    DemoSpec(
        "traffic management",
        "signal control",
        "oversaturated operation",
        _LOGIC,
        "hard",
        "A lane group's demand exceeds its capacity (v/c = 1.1) for a whole peak hour. What "
        "happens to the queue at the end of each green?",
        "A residual queue grows cycle by cycle",
        (
            "The queue clears in every cycle",
            "The queue length stays constant",
            "Delay falls as the cycle repeats",
        ),
        "With v/c > 1, more vehicles arrive per cycle than can discharge, so the overflow left at "
        "the end of green accumulates and delay rises over the period.",
    ),
    DemoSpec(
        "traffic management",
        "incident management",
        "queue shockwave speed",
        _NUMERIC,
        "hard",
        "Upstream traffic flows at 1500 veh/h with density 25 veh/km. A blocking incident stops "
        "traffic; the queue is at jam density 150 veh/km with zero flow. How does the back of the "
        "queue move?",
        "12 km/h upstream",
        ("12 km/h downstream", "10 km/h upstream", "60 km/h upstream"),
        "w = (q2 - q1) / (k2 - k1) = (0 - 1500) / (150 - 25) = -12 km/h: 12 km/h against the "
        "traffic. 10 km/h divides by jam density only; 60 km/h is the upstream speed.",
    ),
    DemoSpec(
        "traffic management",
        "traffic monitoring",
        "occupancy to density",
        _NUMERIC,
        "medium",
        "A loop detector reports 12% occupancy. Vehicles average 4.2 m long and the detection "
        "zone is 1.8 m long. What is the traffic density?",
        "20 veh/km",
        ("29 veh/km", "67 veh/km", "12 veh/km"),
        "k = occupancy / (vehicle length + detector length) = 0.12 / 0.006 km = 20 veh/km. "
        "29 veh/km ignores the detector length; 67 veh/km uses the detector length alone.",
    ),
)

TRAVELER_ITEMS: tuple[DemoSpec, ...] = (
    DemoSpec(
        "traveler",
        "travel reliability",
        "buffer index",
        _NUMERIC,
        "medium",
        "A commute takes 20 min in free flow, 26 min on average, and 36 min on the 95th "
        "percentile day. What is its buffer index?",
        "0.38",
        ("0.80", "1.80", "0.30"),
        "Buffer index = (95th percentile - mean) / mean = (36 - 26) / 26 = 0.38. 0.80 measures "
        "from free flow; 1.80 is the planning time index; 0.30 is the mean delay ratio.",
    ),
    DemoSpec(
        "traveler",
        "trip planning",
        "generalized travel cost",
        _NUMERIC,
        "medium",
        "With a value of time of 12 $/h, which option has the lowest generalized cost: bus "
        "(2 $, 40 min), taxi (15 $, 15 min), bike (0 $, 60 min) or car (8 $ incl. parking, "
        "20 min)?",
        "Bus trip",
        ("Taxi trip", "Bike trip", "Car trip"),
        "Cost = money + 12 $/h x time: bus 2 + 8 = 10 $; taxi 15 + 3 = 18 $; bike 0 + 12 = 12 $; "
        "car 8 + 4 = 12 $. The bus is cheapest.",
    ),
    DemoSpec(
        "traveler",
        "pedestrian safety",
        "pedestrian signal indications",
        _MEMORY,
        "easy",
        "A pedestrian signal shows a flashing upraised hand (DON'T WALK) before you step off the "
        "kerb. What should you do?",
        "Do not start to cross",
        ("Start crossing at a run", "Cross if no car is near", "Start and cross quickly"),
        "A flashing DON'T WALK means pedestrians shall not start to cross; those already "
        "crossing should finish.",
    ),
    DemoSpec(
        "traveler",
        "trip planning",
        "expected waiting time",
        _NUMERIC,
        "easy",
        "Buses run exactly every 12 min and you arrive at the stop at a random time. What is "
        "your expected wait?",
        "6 min",
        ("12 min", "3 min", "4 min"),
        "With regular headway H and random arrivals the mean wait is H / 2 = 6 min.",
    ),
    DemoSpec(
        "traveler",
        "trip planning",
        "transfer connection",
        _LOGIC,
        "easy",
        "Your train arrives at 08:52 and the walk to the bus stop takes 6 min. Buses leave at "
        "08:55, 09:00, 09:10 and 09:25. Which is the earliest bus you can catch?",
        "09:00 bus",
        ("08:55 bus", "09:10 bus", "09:25 bus"),
        "You reach the stop at 08:58, after the 08:55 bus has left, so the 09:00 bus is the first.",
    ),
)

PLANNING_ITEMS: tuple[DemoSpec, ...] = (
    DemoSpec(
        "planning-and-design",
        "geometric design",
        "stopping sight distance",
        _NUMERIC,
        "hard",
        "Design speed 100 km/h on a 3% downgrade, reaction time 2.5 s, deceleration 3.4 m/s^2. "
        "Using SSD = 0.278 V t + V^2 / (254 (a / 9.81 - G)), what is the stopping sight "
        "distance?",
        "194 m",
        ("183 m", "174 m", "124 m"),
        "0.278 x 100 x 2.5 = 69.5 m; 100^2 / (254 x (0.3466 - 0.03)) = 124.4 m; total 193.9 m. "
        "183 m ignores the grade; 174 m treats it as an upgrade; 124 m drops the reaction "
        "distance.",
    ),
    DemoSpec(
        "planning-and-design",
        "geometric design",
        "minimum curve radius",
        _NUMERIC,
        "medium",
        "For a design speed of 80 km/h, superelevation e = 0.06 and side friction f = 0.14, what "
        "is the minimum curve radius from R = V^2 / (127 (e + f))?",
        "252 m",
        ("360 m", "840 m", "126 m"),
        "R = 6400 / (127 x 0.20) = 252 m. 360 m ignores e; 840 m ignores f; 126 m halves it.",
    ),
    DemoSpec(
        "planning-and-design",
        "capacity analysis",
        "peak hour factor",
        _NUMERIC,
        "easy",
        "An approach carries 1200 veh in the peak hour, with 360 veh in its busiest 15 min. "
        "What is the peak hour factor?",
        "0.83",
        ("0.30", "1.20", "0.75"),
        "PHF = V / (4 x V15) = 1200 / 1440 = 0.83. 0.30 omits the factor 4; 1.20 inverts it.",
    ),
    DemoSpec(
        "planning-and-design",
        "capacity analysis",
        "freeway level of service",
        _MEMORY,
        "medium",
        "Under the HCM 6th edition, which level of service does a basic freeway segment at a "
        "density of 22 pc/mi/ln operate at?",
        "LOS C",
        ("LOS B", "LOS D", "LOS E"),
        "HCM 6 basic freeway segments: LOS B up to 18, LOS C over 18 to 26, LOS D over 26 to 35 "
        "pc/mi/ln; 22 falls in C.",
    ),
    DemoSpec(
        "planning-and-design",
        "capacity analysis",
        "number of lanes",
        _NUMERIC,
        "medium",
        "A directional design volume of 4500 veh/h must run at v/c no higher than 0.85; each lane "
        "carries 1800 veh/h at capacity. How many lanes are needed?",
        "3 lanes",
        ("2 lanes", "4 lanes", "5 lanes"),
        "Service flow per lane 0.85 x 1800 = 1530 veh/h; 4500 / 1530 = 2.94, rounded up to 3. "
        "2 lanes rounds down; 4 lanes adds a spare.",
    ),
    DemoSpec(
        "planning-and-design",
        "traffic flow theory",
        "Greenshields model",
        _NUMERIC,
        "hard",
        "A freeway follows Greenshields' linear speed-density model with free-flow speed "
        "100 km/h and jam density 120 veh/km. What is its capacity?",
        "3000 veh/h",
        ("6000 veh/h", "12000 veh/h", "1500 veh/h"),
        "q_max = v_f k_j / 4 = 100 x 120 / 4 = 3000 veh/h (at k = 60 veh/km, v = 50 km/h). "
        "6000 divides by 2; 12000 omits the division.",
    ),
    DemoSpec(
        "planning-and-design",
        "demand forecasting",
        "gravity model",
        _NUMERIC,
        "hard",
        "Zone i produces 1000 trips. Zone 1 attracts 300 (friction factor 1.0), zone 2 attracts "
        "200 (friction factor 2.0). By the gravity model, how many trips go to zone 1?",
        "429 trips",
        ("600 trips", "571 trips", "333 trips"),
        "T1 = 1000 x 300 x 1.0 / (300 x 1.0 + 200 x 2.0) = 300000 / 700 = 429. 600 ignores "
        "friction; 571 is zone 2's share.",
    ),
)

TEXT_ITEMS: tuple[DemoSpec, ...] = (
    *VEHICLE_ITEMS,
    *TRAFFIC_MANAGEMENT_ITEMS,
    *TRAVELER_ITEMS,
    *PLANNING_ITEMS,
)
